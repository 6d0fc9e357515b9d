"""A declarative TopicActionsPolicy: `topic.actions.policy.class.name=controller.rules_policy:RulesPolicy`.

Rules are broker properties under `fauxka.policy.`; every one is optional:

| rule | checks |
|---|---|
| `min.replication.factor`, `max.replication.factor` | the topic's replication factor |
| `max.partitions` | the topic's partition count |
| `topic.name.pattern` | the topic name (regex, full match; CREATE only) |
| `required.configs` | comma list of configs the topic must set |
| `allowed.configs` | comma list; the topic may set no other config |
| `config.<name>.min`, `config.<name>.max` | numeric range of config `<name>` when it is set |
| `config.<name>.allowed` | comma list of values config `<name>` may take when it is set |
| `no.partition.increase.topics` | comma list of names or regexes (full match) that may not gain partitions |
| `no.delete.topics` | comma list of names or regexes (full match) that may not be deleted |
| `exempt.principals` | comma list of principals (`User:admin`) no rule applies to |

Semantics. Configs are the topic's overrides (what the topic sets itself), never broker
defaults: a range or value list applies only when the config is set; to force it to be set, add
it to `required.configs`.

- CREATE: every rule but the two topic lists is checked against the new topic (post_state).
- MODIFY (AlterConfigs, IncrementalAlterConfigs, CreatePartitions): a request may not introduce
  a violation, but a topic that already breaks a rule (created before the rule) is not locked:
  partition and replication rules are checked only when the request changes that number, config
  rules only for configs the request sets to a new value or removes (removing a required config
  is refused; removing a disallowed one is fine). `no.partition.increase.topics` refuses any
  increase of the partition count. The name pattern is not checked.
- DELETE: only `no.delete.topics`.
- `exempt.principals` skips every rule. validate_only requests get the same answer.

The first violation is reported, its message naming the rule's full key. Bad rule values
(non-integers, bad regexes, min above max, an unknown `config.<name>.<suffix>`) raise
PolicyConfigError from configure(), naming the key. Other `fauxka.policy.*` keys belong to other
policies and are ignored (and listed in `ignored_keys`).
"""

from __future__ import annotations

import re
from typing import NoReturn

from .policy import PolicyConfigError, PolicyViolation, TopicAction, TopicActionRequest, TopicActionsPolicy, TopicState

PREFIX = "fauxka.policy."
_INT_RULES = ("min.replication.factor", "max.replication.factor", "max.partitions")
_LIST_RULES = ("required.configs", "allowed.configs", "exempt.principals")
_NAME_LISTS = ("no.partition.increase.topics", "no.delete.topics")
_CONFIG_RULE = re.compile(r"config\.(.+)\.(min|max|allowed)")


def _list(value: str) -> list[str]:
    return [item.strip() for item in value.split(",") if item.strip()]


def _number(text: str) -> int | float:
    try:
        return int(text)
    except ValueError:
        return float(text)


class _Names:
    """A comma list of topic names or regexes; a topic matches an exact name or a full regex match."""

    def __init__(self, key: str, value: str):
        self.names = set(_list(value))
        try:
            self.patterns = [re.compile(n) for n in self.names]
        except re.error as e:
            raise PolicyConfigError(f"Invalid value {value} for configuration {key}: bad regex: {e}") from e

    def __contains__(self, topic: str) -> bool:
        return topic in self.names or any(p.fullmatch(topic) for p in self.patterns)


class RulesPolicy(TopicActionsPolicy):
    def __init__(self) -> None:
        self.ints: dict[str, int] = {}
        self.lists: dict[str, list[str]] = {}
        self.name_lists: dict[str, _Names] = {}
        self.name_pattern: re.Pattern | None = None
        self.ranges: dict[str, dict[str, int | float]] = {}  # config -> {"min": .., "max": ..}
        self.allowed_values: dict[str, list[str]] = {}
        self.ignored_keys: list[str] = []

    # --- configuration ---------------------------------------------------------------------------

    def configure(self, configs: dict[str, str]) -> None:
        for full_key, value in sorted(configs.items()):
            if not full_key.startswith(PREFIX):
                continue
            key, value = full_key[len(PREFIX):], str(value).strip()
            bad = f"Invalid value {value} for configuration {full_key}"
            if key in _INT_RULES:
                try:
                    self.ints[key] = int(value)
                except ValueError:
                    raise PolicyConfigError(f"{bad}: not an integer") from None
                if self.ints[key] < 1:
                    raise PolicyConfigError(f"{bad}: must be at least 1")
            elif key in _LIST_RULES:
                self.lists[key] = _list(value)
            elif key in _NAME_LISTS:
                self.name_lists[key] = _Names(full_key, value)
            elif key == "topic.name.pattern":
                try:
                    self.name_pattern = re.compile(value)
                except re.error as e:
                    raise PolicyConfigError(f"{bad}: bad regex: {e}") from e
            elif key.startswith("config."):
                m = _CONFIG_RULE.fullmatch(key)
                if m is None:
                    raise PolicyConfigError(
                        f"Unknown rule {full_key}: expected {PREFIX}config.<name>.min, .max or .allowed")
                name, kind = m.groups()
                if kind == "allowed":
                    self.allowed_values[name] = _list(value)
                else:
                    try:
                        self.ranges.setdefault(name, {})[kind] = _number(value)
                    except ValueError:
                        raise PolicyConfigError(f"{bad}: not a number") from None
            else:
                self.ignored_keys.append(full_key)
        low, high = self.ints.get("min.replication.factor"), self.ints.get("max.replication.factor")
        if low is not None and high is not None and low > high:
            raise PolicyConfigError(
                f"{PREFIX}min.replication.factor ({low}) is above {PREFIX}max.replication.factor ({high})")
        for name, bounds in self.ranges.items():
            if "min" in bounds and "max" in bounds and bounds["min"] > bounds["max"]:
                raise PolicyConfigError(
                    f"{PREFIX}config.{name}.min ({bounds['min']}) is above {PREFIX}config.{name}.max ({bounds['max']})")

    # --- validation ------------------------------------------------------------------------------

    def validate(self, request: TopicActionRequest) -> None:
        if request.principal in self.lists.get("exempt.principals", ()):
            return
        topic = request.topic
        if request.action is TopicAction.DELETE:
            if topic in self.name_lists.get("no.delete.topics", ()):
                _refuse("no.delete.topics", f"topic '{topic}' may not be deleted.")
            return
        post, pre = request.post_state, request.pre_state
        if post is None:
            return
        creating = request.action is TopicAction.CREATE
        if creating and self.name_pattern is not None and not self.name_pattern.fullmatch(topic):
            _refuse("topic.name.pattern", f"topic name '{topic}' does not match '{self.name_pattern.pattern}'.")
        if not creating and pre is not None and post.num_partitions > pre.num_partitions \
                and topic in self.name_lists.get("no.partition.increase.topics", ()):
            _refuse("no.partition.increase.topics",
                    f"topic '{topic}' may not gain partitions ({pre.num_partitions} to {post.num_partitions}).")
        if creating or pre is None or post.num_partitions != pre.num_partitions:
            limit = self.ints.get("max.partitions")
            if limit is not None and post.num_partitions > limit:
                _refuse("max.partitions",
                        f"topic '{topic}' would have {post.num_partitions} partitions, more than {limit}.")
        if creating or pre is None or post.replication_factor != pre.replication_factor:
            self._check_replication(topic, post.replication_factor)
        self._check_configs(topic, pre if not creating else None, post)

    def _check_replication(self, topic: str, rf: int) -> None:
        low, high = self.ints.get("min.replication.factor"), self.ints.get("max.replication.factor")
        if low is not None and rf < low:
            _refuse("min.replication.factor", f"topic '{topic}' would have replication factor {rf}, less than {low}.")
        if high is not None and rf > high:
            _refuse("max.replication.factor", f"topic '{topic}' would have replication factor {rf}, more than {high}.")

    def _check_configs(self, topic: str, pre: TopicState | None, post: TopicState) -> None:
        before = pre.configs if pre is not None else {}
        changed = {k for k in set(before) | set(post.configs) if before.get(k) != post.configs.get(k)} \
            if pre is not None else set(post.configs)
        missing = sorted(k for k in self.lists.get("required.configs", ()) if k not in post.configs
                         and (pre is None or k in changed))
        if missing:
            _refuse("required.configs", f"topic '{topic}' must set {', '.join(missing)}.")
        allowed = self.lists.get("allowed.configs")
        if allowed is not None:
            refused = sorted(k for k in post.configs if k in changed and k not in allowed)
            if refused:
                _refuse("allowed.configs", f"topic '{topic}' may not set {', '.join(refused)} "
                                           f"(allowed: {', '.join(allowed) or 'none'}).")
        for name in sorted(changed):
            value = post.configs.get(name)
            if value is None:
                continue
            values = self.allowed_values.get(name)
            if values is not None and value not in values:
                _refuse(f"config.{name}.allowed",
                        f"topic '{topic}' would have {name}={value}, not one of {', '.join(values)}.")
            bounds = self.ranges.get(name, {})
            if not bounds:
                continue
            try:
                number = _number(value)
            except ValueError:
                kind = "min" if "min" in bounds else "max"
                _refuse(f"config.{name}.{kind}", f"topic '{topic}' would have {name}={value}, not a number.")
            if "min" in bounds and number < bounds["min"]:
                _refuse(f"config.{name}.min",
                        f"topic '{topic}' would have {name}={value}, less than {bounds['min']}.")
            if "max" in bounds and number > bounds["max"]:
                _refuse(f"config.{name}.max",
                        f"topic '{topic}' would have {name}={value}, more than {bounds['max']}.")


def _refuse(rule: str, text: str) -> NoReturn:
    raise PolicyViolation(f"Rule {PREFIX}{rule}: {text}")
