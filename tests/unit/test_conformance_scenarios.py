"""conformance/scenarios.py and run.py without a cluster: which test numbers a scenario runs, what
its brokers and test-runner's test.conf get (as trivup and LibrdkafkaTestApp write them), and the
table with a column per scenario."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "conformance"))
from run import Row, chosen_numbers, scenario_table  # noqa: E402  (conformance/ is scripts, not a package)
from scenarios import SCENARIOS, broker_settings, client_settings, listeners  # noqa: E402
from ssl_material import SslMaterial  # noqa: E402

SSL = SslMaterial(Path("/ssl"), {"SSL_pkcs": "/ssl/client.pfx"}, ["ssl.ca.location=/ssl/ca.pem"],
                  ["ssl.keystore.type=JKS", "ssl.client.auth=required"])
EVERYTHING = ["0001", "0012", "0045", "0097", "0135"]


def test_chosen_numbers():
    default, ssl, noauto = SCENARIOS["default"], SCENARIOS["ssl"], SCENARIOS["noautocreate"]
    assert chosen_numbers(default, [], EVERYTHING, quick=True) == EVERYTHING
    assert chosen_numbers(ssl, [], EVERYTHING, quick=False) == EVERYTHING
    assert chosen_numbers(ssl, [], EVERYTHING, quick=True) == list(ssl.quick)
    assert chosen_numbers(noauto, [], EVERYTHING, quick=False) == ["0045", "0107", "0111"]
    # asked-for numbers: all of them where a scenario runs every number, its own only elsewhere
    assert chosen_numbers(ssl, ["0097", "0107"], EVERYTHING, quick=True) == ["0097", "0107"]
    assert chosen_numbers(noauto, ["0097", "0107"], EVERYTHING, quick=True) == ["0107"]


def test_broker_and_client_settings():
    noauto = broker_settings(SCENARIOS["noautocreate"], None)
    assert "auto.create.topics.enable=false" in noauto and not any(s.startswith("ssl.") for s in noauto)
    scram = broker_settings(SCENARIOS["sasl_ssl_scram"], SSL)
    assert {"sasl.enabled.mechanisms=SCRAM-SHA-512", "ssl.client.auth=required"} <= set(scram)
    # the suite as librdkafka's SASL CI runs it: Kafka's default, sessions never end; 0142 apart, on
    # brokers whose sessions end
    assert not any(s.startswith("connections.max.reauth.ms") for s in scram)
    assert "connections.max.reauth.ms=10000" in broker_settings(SCENARIOS["sasl_ssl_scram"], SSL, reauth=True)
    assert all(SCENARIOS[name].reauth == ("0142",)
               for name in ("sasl_ssl_scram", "sasl_ssl_plain", "sasl_ssl_oauthbearer"))
    assert any(s.startswith("listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=") for s in scram)
    assert client_settings(SCENARIOS["sasl_ssl_plain"], SSL) == [
        "security.protocol=SASL_SSL", "sasl.mechanisms=PLAIN", "sasl.username=testuser", "sasl.password=testpass",
        "ssl.ca.location=/ssl/ca.pem"]
    assert client_settings(SCENARIOS["sasl_ssl_oauthbearer"], SSL)[1:3] == [
        "sasl.mechanisms=OAUTHBEARER", "enable.sasl.oauthbearer.unsecure.jwt=true"]
    assert client_settings(SCENARIOS["default"], None) == ["security.protocol=PLAINTEXT"]
    assert listeners(SCENARIOS["ssl"], 9000) == "PLAINTEXT://127.0.0.1:9000,SSL://127.0.0.1:9100"
    assert listeners(SCENARIOS["default"], 9000) == "PLAINTEXT://127.0.0.1:9000"


def test_table_has_a_column_per_scenario():
    table = scenario_table({"default": [Row("0001_multiobj", "PASSED", 1.25)],
                            "ssl": [Row("0001_multiobj", "PASSED", 1.5), Row("0097_ssl_verify", "FAILED", 9.0, "x")]})
    assert table.splitlines() == [
        "| test | default | ssl |", "|---|---|---|",
        "| 0001_multiobj | PASSED 1.2 s | PASSED 1.5 s |",
        "| 0097_ssl_verify | - | FAILED 9.0 s |",
        "", "- ssl 0097_ssl_verify: FAILED x"]
