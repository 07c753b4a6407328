"""Read the plain files of a Hermes home: memories/MEMORY.md and USER.md, skills/ with their
usage state, and the curator's run reports. Pure readers: nothing here writes anywhere."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

try:  # optional: without it, the plain `key: value` lines are read
    import yaml
except ImportError:  # pragma: no cover
    yaml = None

from engine.clock import parse_time
from engine.errors import ImportFailed, InvalidInput
from engine.importers import validate
from engine.importers.files import FileIds, find, folder, read_regular, regular_file
from engine.importers.markdown import split_entries, steps_from_body

MAX_FRONT_MATTER = 64 * 1024  # a skill's header is a few lines; more is not a header


@dataclass
class Skill:
    name: str
    description: str
    category: str  # the folder above the skill's, if any
    path: str  # relative to skills/
    steps: list[str]
    triggers: list[str]
    archived: bool  # lives under skills/.archive/
    state: str  # active | stale | archived (from .usage.json)
    pinned: bool
    origin: str  # agent | bundled | hub
    usage: dict
    last_activity: float | None
    created_at: float | None
    sha256: str


@dataclass
class CuratorRun:
    id: str  # the report folder's name
    started_at: float | None
    data: dict


@dataclass
class FilesData:
    memory: list[str] = field(default_factory=list)
    user: list[str] = field(default_factory=list)
    skills: list[Skill] = field(default_factory=list)
    runs: list[CuratorRun] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    # The memory database's own files (files.database_files): never opened, even inside the home.
    avoid: frozenset[tuple[int, int]] = field(default_factory=frozenset, repr=False, compare=False)

    def skip(self, reason: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1


def _read_text(path: Path, avoid: FileIds, raw: bytes | None = None) -> str:
    try:
        return (read_regular(path, avoid=avoid) if raw is None else raw).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ImportFailed(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def read_files(home: Path, *, include_bundled: bool = False, avoid: FileIds = frozenset()) -> FilesData:
    """Only regular files whose real location is inside `home` are read; anything else (a FIFO, a
    device, a symlink out of the home) is skipped with a warning. Trees are walked to a bounded
    depth and never round a symlink loop."""
    out = FilesData(avoid=frozenset(avoid))
    root = home.resolve()
    warn = out.warnings.append
    mem = home / "memories"
    for name, target in (("MEMORY.md", out.memory), ("USER.md", out.user)):
        p = mem / name
        # never the .lock or *.bak.<timestamp> files beside it
        if (p.exists() or p.is_symlink()) and regular_file(root, p, warn):
            target.extend(text for _, text in split_entries(_read_text(p, out.avoid), separator="§"))
    skills = home / "skills"
    if folder(root, skills, warn):
        _read_skills(root, skills, out, include_bundled)
    curator = home / "logs" / "curator"
    if folder(root, curator, warn):
        for d in sorted(p for p in curator.iterdir() if p.is_dir()):
            if folder(root, d, warn):
                _read_run(root, d, out)
    return out


# -- skills --------------------------------------------------------------------------------------
class _Refused(ValueError):
    pass


def _yaml(raw: str):
    """YAML without anchors or aliases: a skill header never needs them, and nine nested aliases
    (a "billion laughs") expand to gigabytes wherever the value is walked or printed. Refused at
    the first event that carries one, before anything is built."""
    if yaml is None:
        raise _Refused("PyYAML is not installed")

    class NoAliasLoader(yaml.SafeLoader):
        def compose_node(self, parent, index):
            if self.check_event(yaml.AliasEvent):
                raise _Refused("YAML aliases (*name) are not allowed")
            if getattr(self.peek_event(), "anchor", None):
                raise _Refused("YAML anchors (&name) are not allowed")
            return super().compose_node(parent, index)

    return yaml.load(raw, Loader=NoAliasLoader)  # noqa: S506 - a SafeLoader subclass


def _front_matter(text: str, where: str = "", warn=None) -> tuple[dict, str]:
    if not text.startswith("---"):
        return {}, text
    m = re.match(r"---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|$)", text[: MAX_FRONT_MATTER + 16], re.S)
    if not m:
        return {}, text
    raw, body = m.group(1), text[m.end() :]
    try:
        data = _yaml(raw)
        data = data if isinstance(data, dict) else {}
        validate.finite_json(data, "front matter")
        json.dumps(data, default=str)
        return data, body
    except Exception as exc:  # noqa: BLE001 - yaml.YAMLError, _Refused, a value we cannot keep
        if warn is not None:
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            warn(f"{where}: front matter not read as YAML ({first}); plain `key: value` lines used")
        # Not YAML we can read: the plain `key: value` lines are still worth having.
        data = {}
        for line in raw.splitlines():
            k, sep, v = line.partition(":")
            if sep and k.strip() and not line.startswith((" ", "\t")):
                data[k.strip()] = v.strip().strip("'\"")
        return data, body


def _iso(v) -> float | None:
    """A time from .usage.json: epoch seconds or ISO text; anything else (or out of range) None."""
    if v is None or v == "" or isinstance(v, bool):
        return None
    try:
        t = float(v) if isinstance(v, (int, float)) else parse_time(str(v))
    except (InvalidInput, OverflowError):
        return None
    return t if 0.0 <= t <= validate.TIME_MAX else None


def _count(v) -> int:
    """A usage counter: a whole number >= 0 in 64 bits, else 0 (never an error)."""
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        return 0
    try:
        n = int(float(v)) if isinstance(v, (float, str)) else v
    except (ValueError, OverflowError):
        return 0
    return n if 0 <= n <= validate.INT_MAX else 0


def _json_file(root: Path, path: Path, out: FilesData):
    if not regular_file(root, path, out.warnings.append):
        return None
    try:
        return validate.loads(_read_text(path, out.avoid))
    except ImportFailed as exc:  # too big, not UTF-8: the file is ignored, not the import
        out.warnings.append(f"{exc}; ignored")
    except ValueError as exc:
        out.warnings.append(f"{path}: not valid JSON ({exc}); ignored")
    return None


def _bundled_names(root: Path, skills: Path, out: FilesData) -> dict[str, str]:
    names: dict[str, str] = {}
    manifest = skills / ".bundled_manifest"
    if manifest.exists() and regular_file(root, manifest, out.warnings.append):
        for line in _read_text(manifest, out.avoid).splitlines():
            name = line.split(":", 1)[0].strip()
            if name:
                names[name] = "bundled"
    lock = skills / ".hub" / "lock.json"
    if lock.exists():
        data = _json_file(root, lock, out)
        entries = data.get("skills", data) if isinstance(data, dict) else data
        if isinstance(entries, dict):
            for name in entries:
                names.setdefault(str(name), "hub")
        elif isinstance(entries, list):
            for e in entries:
                if isinstance(e, dict) and e.get("name"):
                    names.setdefault(str(e["name"]), "hub")
    return names


def _read_skills(root: Path, skills: Path, out: FilesData, include_bundled: bool) -> None:
    usage_path = skills / ".usage.json"
    usage = _json_file(root, usage_path, out) if usage_path.exists() else {}
    usage = usage if isinstance(usage, dict) else {}
    origins = _bundled_names(root, skills, out)
    for p in find(skills, "SKILL.md", out.warnings.append):
        rel = p.relative_to(skills)
        parts = rel.parts[:-1]
        if any(x.startswith(".") and x != ".archive" for x in parts):
            continue  # .hub caches and other hidden folders
        archived = bool(parts) and parts[0] == ".archive"
        folders = parts[1:] if archived else parts
        try:
            raw = read_regular(p, avoid=out.avoid)
        except ImportFailed as exc:  # too big, or swapped for something else meanwhile
            out.warnings.append(f"{exc}; skipped")
            continue
        fm, body = _front_matter(_read_text(p, out.avoid, raw), str(p), out.warnings.append)
        folder = folders[-1] if folders else p.parent.name
        if archived:
            folder = re.sub(r"-\d{14}$", "", folder)  # .archive/<skill>-YYYYMMDDHHMMSS
        name = str(fm.get("name") or folder).strip()
        got = usage.get(name)
        u: dict = got if isinstance(got, dict) else {}
        origin = origins.get(name, "agent")
        if origin != "agent" and not include_bundled and not _count(u.get("patch_count")):
            out.skip(f"skill {origin} with Hermes, never patched by the agent")
            continue
        last = [
            t
            for t in (_iso(u.get(k)) for k in ("last_used_at", "last_viewed_at", "last_patched_at"))
            if t is not None
        ]
        state = "archived" if archived else str(u.get("state") or "active")
        trig = fm.get("triggers") or []
        out.skills.append(
            Skill(
                name=name,
                description=" ".join(str(fm.get("description") or "").split()),
                category=folders[-2] if len(folders) > 1 else "",
                path=str(rel),
                steps=steps_from_body(body),
                triggers=[str(t) for t in trig] if isinstance(trig, list) else [str(trig)],
                archived=archived,
                state=state,
                pinned=bool(u.get("pinned")),
                origin=origin,
                usage={
                    k: _count(u[k]) if k.endswith("_count") else u[k]
                    for k in ("use_count", "view_count", "patch_count", "created_by", "archived_at")
                    if u.get(k) is not None
                },
                last_activity=max(last) if last else None,
                created_at=_iso(u.get("created_at")),
                sha256=hashlib.sha256(raw).hexdigest(),
            )
        )


# -- curator reports -----------------------------------------------------------------------------
def _read_run(root: Path, d: Path, out: FilesData) -> None:
    p = d / "run.json"
    if not (p.exists() or p.is_symlink()):
        out.skip("curator folder without run.json")
        return
    data = _json_file(root, p, out)
    if not isinstance(data, dict):
        out.skip("curator run.json unreadable")
        return
    out.runs.append(CuratorRun(id=d.name, started_at=_iso(data.get("started_at")), data=data))
