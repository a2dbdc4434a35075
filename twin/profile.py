"""The profile: what the twin holds true about its owner in a few lists (seed 000's extraction contract).

`{facts, goals, preferences, routines, tone}`, one JSON row per being in SQLite (`profiles`). Extraction and
reflection return deltas that are merged in (new items appended, case-insensitive duplicates skipped, each
list capped, oldest dropped first); the owner reads it with `twin profile` and edits it by hand with
`twin profile edit` (seed 001: "You edited your profile by hand."). The text form for editing is TOML.
"""

from __future__ import annotations

import json
import tomllib

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from twin.outside_text import strip_controls
from twin.store import Store, profiles

LISTS = ("facts", "goals", "preferences", "routines")
MAX_ITEMS = 40
"""Items kept per list (ours): the profile is a summary, memories hold the rest."""
MAX_ITEM_CHARS = 300
"""Characters in one profile item or the tone (ours): an item is one short sentence (the profile is sent with every
reflection and chat prompt; what needs more words is a memory). What an extraction proposes is cut to this; a hand
edit (`Profile`: `twin profile edit`, the API's `PUT /v1/profile`, the page) longer than this is refused."""


def _one_line(value: object) -> str:
    """One profile item as one line: the same rule as memory content (`twin.outside_text.strip_controls`: escape
    sequences removed whole, other controls dropped, emoji joiners kept), whitespace collapsed."""
    return " ".join(strip_controls(str(value)).split())


def _clean_item(value: object) -> str:
    """`_one_line`, cut to at most `MAX_ITEM_CHARS` characters (what a model proposes)."""
    return _one_line(value)[:MAX_ITEM_CHARS]


class ProfileDelta(BaseModel):
    """What one extraction or reflection adds: items per list (strings; other values are turned into
    strings, blanks dropped) and optionally a new `tone`. Unknown keys are ignored (models add some)."""

    model_config = ConfigDict(extra="ignore")
    facts: list[str] = Field(default_factory=list)
    goals: list[str] = Field(default_factory=list)
    preferences: list[str] = Field(default_factory=list)
    routines: list[str] = Field(default_factory=list)
    tone: str | None = None

    @field_validator(*LISTS, mode="before")
    @classmethod
    def _as_strings(cls, value: object) -> list[str]:
        if value is None:
            return []
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list):
            raise ValueError("must be a list of strings")
        return [item for item in (cls._item(v) for v in value if v is not None) if item]

    @field_validator("tone", mode="before")
    @classmethod
    def _tone(cls, value: object) -> str | None:
        if value is None:
            return None
        return cls._item(value) or None

    @classmethod
    def _item(cls, value: object) -> str:
        """One item as stored: `_clean_item` (a delta's items are cut to `MAX_ITEM_CHARS`)."""
        return _clean_item(value)

    def is_empty(self) -> bool:
        """True when the delta adds nothing."""
        return not (self.tone or any(getattr(self, name) for name in LISTS))


class Profile(ProfileDelta):
    """The whole profile of one being (same shape as a delta; a hand edit may not add unknown keys, nor more
    than `MAX_ITEMS` items to a list, nor an item or tone longer than `MAX_ITEM_CHARS`: it is sent with every
    reflection). The one check of `twin profile edit`, `PUT /v1/profile` and the page."""

    model_config = ConfigDict(extra="forbid")

    @field_validator(*LISTS, mode="before")
    @classmethod
    def _as_strings(cls, value: object) -> list[str]:
        """A hand edit's list as it was given: a list of strings, each cleaned (`_item`), blanks dropped; anything
        else is refused (a delta's leniency, a lone string as a list, 5 as "5", is a model's, not the owner's)."""
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValueError("must be a list of strings")
        return [item for item in (cls._item(v) for v in value) if item]

    @field_validator("tone", mode="before")
    @classmethod
    def _tone(cls, value: object) -> str | None:
        """A hand edit's tone: a string (cleaned) or null."""
        if value is not None and not isinstance(value, str):
            raise ValueError("must be a string or null")
        return None if value is None else cls._item(value) or None

    @classmethod
    def _item(cls, value: object) -> str:
        """One item of a hand edit: `_one_line`; longer than `MAX_ITEM_CHARS` is refused (`ValueError`), not cut
        (cutting would keep a part the owner never chose)."""
        item = _one_line(value)
        if len(item) > MAX_ITEM_CHARS:
            raise ValueError(f"at most {MAX_ITEM_CHARS} characters a line, one short sentence (got a line of "
                             f"{len(item)}); what needs more words is a memory")
        return item

    @field_validator(*LISTS)
    @classmethod
    def _bounded(cls, items: list[str]) -> list[str]:
        if len(items) > MAX_ITEMS:
            raise ValueError(f"at most {MAX_ITEMS} items (got {len(items)})")
        return items

    def merged(self, delta: ProfileDelta) -> tuple[Profile, bool]:
        """This profile with `delta` merged in, and whether anything changed. Items already present
        (case-insensitively) are skipped; each list keeps its newest `MAX_ITEMS`."""
        data = self.model_dump()
        changed = False
        for name in LISTS:
            items = list(data[name])
            seen = {item.casefold() for item in items}
            for item in getattr(delta, name):
                if item.casefold() not in seen:
                    items.append(item)
                    seen.add(item.casefold())
                    changed = True
            data[name] = items[-MAX_ITEMS:]
        if delta.tone and delta.tone != self.tone:
            data["tone"] = delta.tone
            changed = True
        return Profile.model_validate(data), changed

    def summary(self) -> str:
        """A few lines for a prompt: one per non-empty list, items joined by "; "."""
        lines = [f"{name}: {'; '.join(getattr(self, name))}" for name in LISTS if getattr(self, name)]
        if self.tone:
            lines.append(f"tone: {self.tone}")
        return "\n".join(lines) or "(empty)"

    def to_toml(self) -> str:
        """The editable text form: a commented TOML document that `from_toml` reads back."""
        out = ["# Your twin's profile. Edit, save and close; each list holds short sentences about you.",
               "# Delete a line to remove an item. Invalid TOML leaves the profile unchanged.", ""]
        for name in LISTS:
            items = [f"    {json.dumps(item, ensure_ascii=False)}," for item in getattr(self, name)]
            out.extend([f"{name} = [", *items, "]"] if items else [f"{name} = []"])
        out.append(f"tone = {json.dumps(self.tone or '', ensure_ascii=False)}")
        return "\n".join(out) + "\n"

    @classmethod
    def from_toml(cls, text: str) -> Profile:
        """Parse the text form. Raises `ValueError` naming the problem (the line of a TOML error; the unknown
        key or the list that is too long) when it is not a valid profile."""
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"not valid TOML: {exc}") from exc
        except RecursionError as exc:
            raise ValueError("not a profile: nested too deeply") from exc
        if data.get("tone") == "":
            data["tone"] = None
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(part) for part in err["loc"]) or "the profile"
            raise ValueError(f"{where}: {err['msg']}") from exc


def load_profile(store: Store, being: str) -> Profile:
    """The stored profile of `being` (empty when none was ever written, or when the row is unreadable)."""
    data = profiles.profile_json(store, being)
    if data is None:
        return Profile()
    try:
        return Profile.model_validate_json(data)
    except ValueError:
        return Profile()


def save_profile(store: Store, being: str, profile: Profile, now: str) -> None:
    """Replace the profile of `being`; `now` is UTC ISO-8601. Joins the caller's transaction if one is open."""
    profiles.save_profile_json(store, being, profile.model_dump_json(), now)


def merge_into_profile(store: Store, being: str, delta: ProfileDelta, now: str) -> bool:
    """Merge `delta` into the stored profile of `being`; returns True if the profile changed."""
    if delta.is_empty():
        return False
    merged, changed = load_profile(store, being).merged(delta)
    if changed:
        save_profile(store, being, merged, now)
    return changed
