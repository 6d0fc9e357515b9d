"""The controller's policies asked about a topic or broker change (KIP-201's TopicActionsPolicy, the
legacy CreateTopicPolicy and AlterConfigPolicy: fauxka/controller/policy.py), with a topic's state as
the policies see it before the change. A violation is POLICY_VIOLATION; a policy that fails is
logged and answered UNKNOWN_SERVER_ERROR, as Kafka does."""

from typing import Any

from fauxka.model.errors import ErrorCode, KafkaError

from .audit import Caller
from .broker_parts import Metadata
from .policy import PolicySet, PolicyViolation, TopicAction, TopicActionRequest, TopicState


class PolicyGate:
    def __init__(self, policies: PolicySet, cache: Metadata, log: Any):
        self.policies = policies
        self._cache = cache
        self._log = log

    def state_of(self, name: str) -> TopicState | None:
        """The topic as the cache shows it (None: unknown), as a policy's pre-state."""
        partitions = self._cache.partitions_of(name)
        if not partitions:
            return None
        replicas = partitions.get(0) or next(iter(partitions.values()))
        return TopicState(num_partitions=len(partitions), replication_factor=len(replicas),
                          replica_assignments={p: list(r) for p, r in partitions.items()},
                          configs=dict(self._cache.topic_configs.get(name, {})))

    def check_topic(self, action: TopicAction, topic: str, pre: TopicState | None, post: TopicState | None,
                    caller: Caller, validate_only: bool, **details: Any) -> None:
        request = TopicActionRequest(action=action, topic=topic, principal=caller.principal,
                                     client_address=caller.client_address, pre_state=pre, post_state=post,
                                     validate_only=validate_only, **details)
        self._run(lambda: self.policies.validate_topic(request), topic=topic, action=action.name)

    def check_broker(self, broker: str, requested: dict[str, str | None]) -> None:
        """The legacy AlterConfigPolicy on a broker resource ('' for the cluster default)."""
        self._run(lambda: self.policies.validate_broker_configs(broker, requested), broker=broker)

    def _run(self, validate, **context: Any) -> None:
        try:
            validate()
        except PolicyViolation as exc:
            raise KafkaError(ErrorCode.policy_violation, exc.message) from None
        except Exception as exc:  # a policy bug: Kafka answers UNKNOWN_SERVER_ERROR and logs it
            self._log.exception("policy failed", error=repr(exc), **context)
            raise KafkaError(ErrorCode.unknown_server_error, None) from None

    def close(self) -> None:
        self.policies.close()
