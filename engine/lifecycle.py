"""The memory lifecycle as one mixin for MemoryEngine: decay (decay_pass.py), rules and rejections
(rules.py), flows (flows.py), boot context (boot.py) and action gates (gates.py)."""
from __future__ import annotations

from .boot import BootMixin
from .decay_pass import DecayMixin
from .flows import FlowsMixin
from .gates import GatesMixin
from .rules import RulesMixin


class LifecycleMixin(DecayMixin, RulesMixin, FlowsMixin, BootMixin, GatesMixin):
    """Decay, rules, flows, boot context and gates (see each module's docstring)."""
