"""The access policy as data: principals, groups, grants on object patterns.

Objects form a tree: catalog > schema > view. A grant on an object applies to
everything below it. OWNER implies every privilege there; project owners hold
every privilege everywhere and are the only ones who may change the policy.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal

Level = Literal["catalog", "schema", "view"]


class Privilege(StrEnum):
    USE_CATALOG = "USE_CATALOG"
    USE_SCHEMA = "USE_SCHEMA"
    CREATE_VIEW = "CREATE_VIEW"
    ALTER_VIEW = "ALTER_VIEW"
    DROP_VIEW = "DROP_VIEW"
    SELECT_VIEW = "SELECT_VIEW"
    OWNER = "OWNER"


# The level a privilege is checked on (OWNER: any level).
CHECKED_ON: dict[Privilege, Level] = {
    Privilege.USE_CATALOG: "catalog",
    Privilege.USE_SCHEMA: "schema",
    Privilege.CREATE_VIEW: "schema",
    Privilege.ALTER_VIEW: "view",
    Privilege.DROP_VIEW: "view",
    Privilege.SELECT_VIEW: "view",
}
DEPTH: dict[Level, int] = {"catalog": 0, "schema": 1, "view": 2}


@dataclass(frozen=True, order=True)
class Securable:
    """A catalog, a schema (possibly dotted) or a view."""

    level: Level
    catalog: str
    schema: str = ""
    name: str = ""

    def __str__(self) -> str:
        parts = [self.catalog, self.schema, self.name][: DEPTH[self.level] + 1]
        return f"{self.level} {'.'.join(parts)}"

    @classmethod
    def catalog_of(cls, catalog: str) -> Securable:
        return cls("catalog", catalog)

    @classmethod
    def schema_of(cls, catalog: str, schema: str) -> Securable:
        return cls("schema", catalog, schema)

    @classmethod
    def view_of(cls, catalog: str, schema: str, name: str) -> Securable:
        return cls("view", catalog, schema, name)


@dataclass(frozen=True)
class Pattern:
    """Glob patterns (fnmatch, case-sensitive) for one level of the tree."""

    level: Level
    catalog: str
    schema: str = "*"
    name: str = "*"

    @classmethod
    def parse(cls, level: Level, text: str) -> Pattern:
        """`cat`, `cat.schema` (the schema may be dotted) or `cat.schema.view`."""
        if level == "catalog":
            return cls(level, text)
        first, _, rest = text.partition(".")
        if level == "schema":
            return cls(level, first, rest)
        schema, _, name = rest.rpartition(".")
        return cls(level, first, schema, name)

    def covers(self, obj: Securable) -> bool:
        """The object is the pattern's object or lies below it."""
        if DEPTH[obj.level] < DEPTH[self.level]:
            return False
        if not fnmatch.fnmatchcase(obj.catalog, self.catalog):
            return False
        if self.level != "catalog" and not fnmatch.fnmatchcase(obj.schema, self.schema):
            return False
        return self.level != "view" or fnmatch.fnmatchcase(obj.name, self.name)

    def within(self, obj: Securable) -> bool:
        """Some object this pattern can match lies at or below `obj` (for OWNER's USE_* implication)."""
        if DEPTH[self.level] < DEPTH[obj.level]:
            return False
        if not fnmatch.fnmatchcase(obj.catalog, self.catalog):
            return False
        return obj.level == "catalog" or fnmatch.fnmatchcase(obj.schema, self.schema)

    def __str__(self) -> str:
        parts = [self.catalog, self.schema, self.name][: DEPTH[self.level] + 1]
        return f"{self.level} {'.'.join(parts)}"


@dataclass(frozen=True)
class Grant:
    to: tuple[str, ...]
    privileges: frozenset[Privilege]
    on: Pattern


@dataclass(frozen=True)
class Group:
    name: str
    members: tuple[str, ...]
    codeowners: str | None = None  # how GitHub names this group ("@org/team")


@dataclass(frozen=True)
class AccessPolicy:
    owners: tuple[str, ...] = ()  # project owners
    groups: dict[str, Group] = field(default_factory=dict)
    grants: tuple[Grant, ...] = ()
    source: str = ""  # the file it was read from
    digest: str = ""  # of the policy's content, to show which policy a plan used


def norm(principal: str) -> str:
    """Principals compare case-insensitively: e-mail addresses and GitHub logins both do."""
    return principal.strip().casefold()


def is_email(principal: str) -> bool:
    local, at, domain = principal.partition("@")
    return bool(at and local and "." in domain)
