"""Build hook: the wheel ships the top-level schemas/ (the one copy, also what editors'
`$schema` comments point at) inside the package as reconciler/schemas/, where
reconciler.source.config.schema_document finds it through importlib.resources. Everything
else about the build is declared in pyproject.toml."""

from __future__ import annotations

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

SCHEMAS = Path(__file__).resolve().parent / "schemas"


class BuildPyWithSchemas(build_py):
    def run(self) -> None:
        super().run()
        if self.editable_mode:  # an editable install reads schemas/ in place, beside the package
            return
        files = sorted(SCHEMAS.glob("*.json"))
        if not files:  # e.g. an sdist built without MANIFEST.in's graft: never ship a wheel without them
            raise SystemExit(f"no JSON Schemas in {SCHEMAS}")
        target = Path(self.build_lib, "reconciler", "schemas")
        self.mkpath(str(target))
        for src in files:
            self.copy_file(str(src), str(target / src.name))


setup(cmdclass={"build_py": BuildPyWithSchemas})
