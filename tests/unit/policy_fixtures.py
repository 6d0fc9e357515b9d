"""Policy classes for tests, loadable as `tests.unit.policy_fixtures:Name` (unit and integration)."""

from __future__ import annotations

import dataclasses
import json

from fauxka.controller.policy import (
    AlterConfigPolicy,
    AlterConfigRequest,
    CreateTopicPolicy,
    CreateTopicRequest,
    PolicyConfigError,
    PolicyViolation,
    TopicActionRequest,
    TopicActionsPolicy,
)

RECORD_FILE = "fauxka.policy.record.file"


class RejectAllCreates(CreateTopicPolicy):
    """Legacy create.topic.policy: refuses every topic."""

    def validate(self, request: CreateTopicRequest) -> None:
        raise PolicyViolation("no topics today")


class RejectAllAlterConfigs(AlterConfigPolicy):
    """Legacy alter.config.policy: refuses every config change, topic or broker."""

    def validate(self, request: AlterConfigRequest) -> None:
        raise PolicyViolation(f"no config changes today ({request.resource_type} '{request.resource_name}')")


class OnlyAlice(TopicActionsPolicy):
    """Admits every action by User:alice, and nobody else's."""

    def validate(self, request: TopicActionRequest) -> None:
        if request.principal != "User:alice":
            raise PolicyViolation(
                f"only User:alice may {request.action.value} topics, not {request.principal}")


class RecordingTopicActions(TopicActionsPolicy):
    """Admits everything; appends one JSON line per call to `fauxka.policy.record.file`."""

    def configure(self, configs: dict[str, str]) -> None:
        self.path = configs.get(RECORD_FILE)
        if not self.path:
            raise PolicyConfigError(f"RecordingTopicActions needs {RECORD_FILE}")

    def validate(self, request: TopicActionRequest) -> None:
        line = {
            "action": request.action.value,
            "topic": request.topic,
            "principal": request.principal,
            "client_address": request.client_address,
            "validate_only": request.validate_only,
            "manual_assignment": request.manual_assignment,
            "requested_configs": request.requested_configs,
            "pre_state": _state(request.pre_state),
            "post_state": _state(request.post_state),
        }
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(json.dumps(line, sort_keys=True) + "\n")


def _state(state) -> dict | None:
    if state is None:
        return None
    out = dataclasses.asdict(state)
    out["replica_assignments"] = {str(p): r for p, r in state.replica_assignments.items()}
    return out


def read_records(path) -> list[dict]:
    """The lines RecordingTopicActions wrote (empty when the file does not exist yet)."""
    try:
        with open(path, encoding="utf-8") as f:
            return [json.loads(line) for line in f if line.strip()]
    except FileNotFoundError:
        return []


class CrashingPolicy(TopicActionsPolicy):
    """A TopicActionsPolicy with a bug: every call raises RuntimeError."""

    def validate(self, request: TopicActionRequest) -> None:
        raise RuntimeError("policy crashed")


class CrashingCreatePolicy(CreateTopicPolicy):
    """A legacy create policy with a bug."""

    def validate(self, request: CreateTopicRequest) -> None:
        raise RuntimeError("create policy crashed")


# --- for unit tests: in-process capture ----------------------------------------------------------


class CapturingCreatePolicy(CreateTopicPolicy):
    """Remembers its configs, requests and close() in `CapturingCreatePolicy.instances`."""

    instances: list[CapturingCreatePolicy] = []

    def __init__(self) -> None:
        self.configs: dict[str, str] | None = None
        self.requests: list[CreateTopicRequest] = []
        self.closed = False
        CapturingCreatePolicy.instances.append(self)

    def configure(self, configs: dict[str, str]) -> None:
        self.configs = configs

    def validate(self, request: CreateTopicRequest) -> None:
        self.requests.append(request)

    def close(self) -> None:
        self.closed = True


class CapturingAlterConfigPolicy(AlterConfigPolicy):
    instances: list[CapturingAlterConfigPolicy] = []

    def __init__(self) -> None:
        self.requests: list[AlterConfigRequest] = []
        self.closed = False
        CapturingAlterConfigPolicy.instances.append(self)

    def validate(self, request: AlterConfigRequest) -> None:
        self.requests.append(request)

    def close(self) -> None:
        self.closed = True


class CloseFails(TopicActionsPolicy):
    def validate(self, request: TopicActionRequest) -> None:
        pass

    def close(self) -> None:
        raise OSError("cannot close")


class ConfigureFails(TopicActionsPolicy):
    def configure(self, configs: dict[str, str]) -> None:
        raise ValueError("bad settings")


class NotAPolicy:
    def validate(self, request) -> None:
        pass
