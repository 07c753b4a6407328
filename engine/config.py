"""One typed settings object: every tunable the engine documents, with its default.

Values can be overridden from a TOML file (`<config dir>/memconsole/config.toml`, or the file named
by MEMCONSOLE_CONFIG) with sections matching the dataclasses below, e.g.

    [decay]
    half_life_days = { episodic = 7, semantic = 30, procedural = 90 }
    [search]
    vector_weight = 0.8
"""
from __future__ import annotations

import math
import os
import tomllib
from dataclasses import dataclass, field, fields, replace
from pathlib import Path


@dataclass(frozen=True)
class DecaySettings:
    # Half-lives in days: episodic fades fastest, procedural slowest.
    half_life_days: dict = field(default_factory=lambda: {
        "episodic": 7.0, "semantic": 30.0, "procedural": 90.0})
    archive_threshold: float = 0.3
    reinforce_boost: float = 0.2          # strength added by a reinforcement (capped at 1)
    rule_grace_days: float = 7.0          # a rule unreinforced this long starts to lose score
    rule_daily_loss: float = 0.5
    rule_reinforce_boost: float = 1.0     # score a rule gains when reinforced (capped at 10)
    rule_violation_boost: float = 0.5     # a broken rule proved relevant: it gains this and its clock resets
    snapshot_step: float = 0.05           # a pass rewrites a stored strength only when it fell this much

    def rate(self, kind: str) -> float:
        """Per-second decay rate λ for a kind: strength(t) = s0 · exp(-λ · t)."""
        hl = float(self.half_life_days.get(kind, self.half_life_days.get("semantic", 30.0)))
        return math.log(2) / (hl * 86400.0)


@dataclass(frozen=True)
class SearchSettings:
    """Retrieval defaults, each chosen on the LoCoMo benchmark (bench/locomo.py, BENCHMARKS.md) and
    kept only where it held on conversations it was not chosen on (bench/locomo_tune.py)."""
    # Per retriever, before fusion. 100 rather than 50: score-aware fusion lifts a memory that one
    # retriever ranks 60th but the other likes; cost is ~1 ms.
    candidates: int = 100
    # "convex": keyword_share·BM25/best BM25 + (1-keyword_share)·min-max-scaled cosine (engine/
    # fusion.py). It keeps score gaps that rank fusion throws away; plain RRF loses to BM25 alone
    # on LoCoMo at k <= 10, convex fusion beats both retrievers at every k. "rrf": weighted RRF.
    fusion: str = "convex"
    keyword_share: float = 0.6            # BM25 is the stronger retriever on conversational recall
    # Hybrid only: the memories written just before and after a candidate in the same session get
    # this share of its fused score (answers sit next to the turn that shares the question's
    # words). +0.03 R@10 on LoCoMo, same on the held-out half; 0 turns it off.
    session_context: float = 0.15
    rrf_k: float = 60.0                   # fusion = "rrf" only
    keyword_weight: float = 1.0           # fusion = "rrf" only
    vector_weight: float = 1.0            # fusion = "rrf" only
    # Keyword queries drop words more than this share of memories contain, once there are
    # common_terms_from memories (the rarest word always remains). BM25 weighs such a word little
    # (IDF <= log 9; ~0 past half), yet FTS5 must score every memory containing it: at 100k one
    # such word cost ~0.5 s. On LoCoMo with the size floor lifted: hybrid R@10 0.766 -> 0.770,
    # keyword-only R@1 -0.010 / R@10 -0.004 (at 0.05: keyword R@1 -0.03). 0 = keep every word.
    common_term_share: float = 0.1
    common_terms_from: int = 20_000
    # Matches one keyword query scores over every memory (engine/keyword.py): past this, the kept
    # words' commoner part is scored over the newest memories only, in a window of ids sized to
    # about this many matches. A cap on the worst queries, not a speed-up of the median: at 1M
    # (bench/keyword_bounds.py) the slowest of 100 queries 563 -> 295 ms, p50/p95 and the top 10
    # unchanged vs no bound (69.0% vs 69.1% agreement with every-word search); 40k also cut p95
    # (228 -> 141 ms) but agreement to 57%. Never applies below this many memories. 0 = off.
    keyword_rows: int = 150_000
    # Vector search answers from an in-memory matrix (engine/vector_matrix.py; KNN ~20x faster
    # than vec0's scan at 100k) once an engine has run this many vector searches: the matrix then
    # loads in a background thread on its own connection (seconds at 100k, ~1.5 KB a memory) and
    # vec0 answers until it is ready. Long-lived engines (console, benches) get it; one-shot CLI
    # calls never pay to load it. `eng.vectors.keep_in_memory(background=True)` starts it at
    # once. It follows every process's writes through the vector_changes log. 0 = never.
    matrix_after: int = 3
    # From this many vectors on, the matrix finds candidates by the Hamming distance of sign bits
    # (32x less memory to scan) and rescores max(bits_rescore, 10·k) of them exactly; below it,
    # or when a filter leaves fewer rows, it is exact. recall@10 vs exact: BENCHMARKS.md.
    bits_from: int = 50_000
    bits_rescore: int = 2000
    # An add_memories batch at least this big checks near-duplicates against the in-memory matrix
    # in one product instead of one vec0 scan per item (75 ms each at 100k memories).
    dedup_matrix_from: int = 32
    # final = fused · (1 - w_s - w_i - w_r + w_s·strength + w_i·importance + w_r·recency)
    strength_weight: float = 0.1
    importance_weight: float = 0.1
    recency_weight: float = 0.05
    recency_half_life_days: float = 30.0
    dedup_threshold: float = 0.95
    thin_results: int = 3                 # fewer hits than this: say where else the query matches


@dataclass(frozen=True)
class CuratorSettings:
    merge_threshold: float = 0.90         # cosine at or above which two memories/rules are near-duplicates
    rule_prefix_chars: int = 40           # rules sharing this many leading characters are near-duplicates
    max_cluster: int = 25                 # members per merge proposal (larger clusters are split)
    stale_days: float = 14.0              # no activity this long: reported as stale
    archive_days: float = 30.0            # no activity this long: proposed for archiving
    promote_categories: tuple = ("learning", "discovery")
    promote_min_reinforcements: int = 3   # access/reinforcement count that earns a rule
    promote_rule_score: float = 5.0
    retire_days: float = 60.0             # a dormant rule unreinforced this long is proposed for retirement
    merged_rule_bonus: float = 0.5        # a merged rule keeps the higher score plus this
    auto_apply: tuple = ()                # kinds applied without approval (explicit policy; off by default)


@dataclass(frozen=True)
class LifecycleSettings:
    flow_flag_below: float = 0.6          # a flow under this effectiveness is flagged...
    flow_flag_min_runs: int = 5           # ...once it has at least this many runs
    flow_trend_window: int = 10           # recent runs compared with the window before them
    boot_max_rules: int = 20              # critical/active rules in a boot context
    boot_max_items: int = 15              # decisions, tasks, rejections each
    chars_per_token: float = 4.0          # token estimate for boot context
    state_similarity: float = 0.5         # word overlap at which a gate-post state entry consolidates


@dataclass(frozen=True)
class Settings:
    decay: DecaySettings = field(default_factory=DecaySettings)
    search: SearchSettings = field(default_factory=SearchSettings)
    lifecycle: LifecycleSettings = field(default_factory=LifecycleSettings)
    curator: CuratorSettings = field(default_factory=CuratorSettings)
    model_path: str | None = None
    # The console's key remaps: binding id -> keys, e.g. {"app.quit" = "ctrl+q", "search.pin" = "P"}
    # (every binding's id is listed by `?` in the console). A dict of strings: no UI import here.
    keymap: dict = field(default_factory=dict)


def _apply(obj, data: dict):
    known = {f.name: f for f in fields(obj)}
    changes = {}
    for k, v in data.items():
        if k not in known:
            raise ValueError(f"unknown setting {k!r}")
        cur = getattr(obj, k)
        if hasattr(cur, "__dataclass_fields__") and isinstance(v, dict):
            changes[k] = _apply(cur, v)
        elif isinstance(cur, dict) and isinstance(v, dict):
            changes[k] = {**cur, **v}
        else:
            changes[k] = v
    return replace(obj, **changes)


def load_settings(path: str | os.PathLike | None = None) -> Settings:
    """Defaults, overlaid with the TOML file if there is one. A bad file is a clear error."""
    from .errors import InvalidInput

    if path is None:
        env = os.environ.get("MEMCONSOLE_CONFIG")
        if env:
            path = env
        else:
            from .paths import config_file

            path = config_file()
    p = Path(path)
    if not p.exists():
        return Settings()
    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
        return _apply(Settings(), data)
    except (tomllib.TOMLDecodeError, ValueError, TypeError) as exc:
        raise InvalidInput(f"{p}: bad configuration ({exc})") from exc
