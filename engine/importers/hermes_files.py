"""Read the plain files of a Hermes home: memories/MEMORY.md and USER.md, skills/ with their
usage state, and the curator's run reports. Pure readers: nothing here writes anywhere."""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..clock import parse_time
from ..errors import ImportFailed, InvalidInput
from .markdown import split_entries, steps_from_body


@dataclass
class Skill:
    name: str
    description: str
    category: str                  # the folder above the skill's, if any
    path: str                      # relative to skills/
    steps: list[str]
    triggers: list[str]
    archived: bool                 # lives under skills/.archive/
    state: str                     # active | stale | archived (from .usage.json)
    pinned: bool
    origin: str                    # agent | bundled | hub
    usage: dict
    last_activity: float | None
    created_at: float | None
    sha256: str


@dataclass
class CuratorRun:
    id: str                        # the report folder's name
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

    def skip(self, reason: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1


def _read_text(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ImportFailed(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise ImportFailed(f"{path}: cannot read ({exc.strerror})") from None


def read_files(home: Path, *, include_bundled: bool = False) -> FilesData:
    out = FilesData()
    mem = home / "memories"
    for name, target in (("MEMORY.md", out.memory), ("USER.md", out.user)):
        p = mem / name
        if p.is_file():     # never the .lock or *.bak.<timestamp> files beside it
            target.extend(text for _, text in split_entries(_read_text(p), separator="§"))
    skills = home / "skills"
    if skills.is_dir():
        _read_skills(skills, out, include_bundled)
    curator = home / "logs" / "curator"
    if curator.is_dir():
        for d in sorted(p for p in curator.iterdir() if p.is_dir()):
            _read_run(d, out)
    return out


# -- skills --------------------------------------------------------------------------------------
def _front_matter(text: str) -> tuple[dict, str]:
    if not text.startswith("---"):
        return {}, text
    m = re.match(r"---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|$)", text, re.S)
    if not m:
        return {}, text
    raw, body = m.group(1), text[m.end():]
    try:
        import yaml

        data = yaml.safe_load(raw)
        return (data if isinstance(data, dict) else {}), body
    except Exception:
        # Not YAML we can parse: the plain `key: value` lines are still worth having.
        data = {}
        for line in raw.splitlines():
            k, sep, v = line.partition(":")
            if sep and k.strip() and not line.startswith((" ", "\t")):
                data[k.strip()] = v.strip().strip("'\"")
        return data, body


def _iso(v) -> float | None:
    if v is None or v == "":
        return None
    if isinstance(v, (int, float)):
        return float(v)
    try:
        return parse_time(str(v))
    except InvalidInput:
        return None


def _json_file(path: Path, out: FilesData):
    try:
        return json.loads(_read_text(path))
    except ValueError as exc:
        out.warnings.append(f"{path}: not valid JSON ({exc}); ignored")
        return None


def _bundled_names(skills: Path, out: FilesData) -> dict[str, str]:
    names: dict[str, str] = {}
    manifest = skills / ".bundled_manifest"
    if manifest.is_file():
        for line in _read_text(manifest).splitlines():
            name = line.split(":", 1)[0].strip()
            if name:
                names[name] = "bundled"
    lock = skills / ".hub" / "lock.json"
    if lock.is_file():
        data = _json_file(lock, out)
        entries = data.get("skills", data) if isinstance(data, dict) else data
        if isinstance(entries, dict):
            for name in entries:
                names.setdefault(str(name), "hub")
        elif isinstance(entries, list):
            for e in entries:
                if isinstance(e, dict) and e.get("name"):
                    names.setdefault(str(e["name"]), "hub")
    return names


def _read_skills(skills: Path, out: FilesData, include_bundled: bool) -> None:
    usage_path = skills / ".usage.json"
    usage = _json_file(usage_path, out) if usage_path.is_file() else {}
    usage = usage if isinstance(usage, dict) else {}
    origins = _bundled_names(skills, out)
    for p in sorted(skills.rglob("SKILL.md")):
        rel = p.relative_to(skills)
        parts = rel.parts[:-1]
        if any(x.startswith(".") and x != ".archive" for x in parts):
            continue                                   # .hub caches and other hidden folders
        archived = bool(parts) and parts[0] == ".archive"
        folders = parts[1:] if archived else parts
        raw = p.read_bytes()
        fm, body = _front_matter(_read_text(p))
        folder = folders[-1] if folders else p.parent.name
        if archived:
            folder = re.sub(r"-\d{14}$", "", folder)   # .archive/<skill>-YYYYMMDDHHMMSS
        name = str(fm.get("name") or folder).strip()
        u = usage.get(name) if isinstance(usage.get(name), dict) else {}
        origin = origins.get(name, "agent")
        if origin != "agent" and not include_bundled and not int(u.get("patch_count") or 0):
            out.skip(f"skill {origin} with Hermes, never patched by the agent")
            continue
        last = [t for t in (_iso(u.get(k)) for k in ("last_used_at", "last_viewed_at",
                                                       "last_patched_at")) if t is not None]
        state = "archived" if archived else str(u.get("state") or "active")
        trig = fm.get("triggers") or []
        out.skills.append(Skill(
            name=name, description=" ".join(str(fm.get("description") or "").split()),
            category=folders[-2] if len(folders) > 1 else "", path=str(rel),
            steps=steps_from_body(body), triggers=[str(t) for t in trig] if isinstance(trig, list) else [str(trig)],
            archived=archived, state=state, pinned=bool(u.get("pinned")), origin=origin,
            usage={k: u[k] for k in ("use_count", "view_count", "patch_count", "created_by",
                                     "archived_at") if u.get(k) is not None},
            last_activity=max(last) if last else None, created_at=_iso(u.get("created_at")),
            sha256=hashlib.sha256(raw).hexdigest()))


# -- curator reports -----------------------------------------------------------------------------
def _read_run(d: Path, out: FilesData) -> None:
    p = d / "run.json"
    if not p.is_file():
        out.skip("curator folder without run.json")
        return
    data = _json_file(p, out)
    if not isinstance(data, dict):
        out.skip("curator run.json unreadable")
        return
    out.runs.append(CuratorRun(id=d.name, started_at=_iso(data.get("started_at")), data=data))
