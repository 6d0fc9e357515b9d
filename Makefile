# The two set-up commands of the README. Both install what is missing first.
.PHONY: install up test compose-test conformance conformance-quick

install:
	./scripts/install

up: install
	.venv/bin/fauxka up

test: install
	.venv/bin/python -m pytest

# The docker-compose cluster with the real engine (docker compose v2): builds the images, brings the
# shipped file up, checks it from the host and from the compose network, tears it down.
compose-test: install
	FAUXKA_COMPOSE_TEST=1 .venv/bin/python -m pytest -p no:cacheprovider -v -s tests/compose

# librdkafka's own integration suite (scripts/conformance): fetches and builds librdkafka 2.12.0 and
# its test-runner once into .conformance/, then runs the chosen tests one by one against a fresh
# cluster per scenario (default, ssl, sasl_ssl_scram/_plain/_oauthbearer, noautocreate; one of them:
# ./scripts/conformance --scenario ssl); the table goes to .conformance/run/results.md.
conformance: install
	./scripts/conformance

# What CI runs: test-runner's quick mode (-Q: the sub-tests librdkafka marks quick): every chosen test
# in the default scenario, a few in each secured one, noautocreate's four.
conformance-quick: install
	./scripts/conformance --quick
