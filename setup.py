"""Build script: maps the four code folders and fixtures/ to import packages and
builds the optional C fast path (pure-Python fallback when no compiler)."""

from __future__ import annotations

import os

from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext

CODE_FOLDERS = {
    "formats": "lethe_formats",
    "reference": "lethe_reference",
    "conformance": "lethe_conformance",
    "tools": "lethe_tools",
}


def _packages() -> tuple[list[str], dict[str, str]]:
    packages: list[str] = []
    package_dir: dict[str, str] = {}
    for folder, top in CODE_FOLDERS.items():
        for name in find_packages(folder, include=[top, f"{top}.*"]):
            packages.append(name)
            package_dir[name] = os.path.join(folder, *name.split("."))
    packages.append("lethe_fixtures")
    package_dir["lethe_fixtures"] = "fixtures"
    return packages, package_dir


class OptionalBuildExt(build_ext):
    """The C decoder is a speed-up, never a requirement: fall back if it cannot build."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as error:
            print(f"warning: C fast path not built ({error}); using the pure-Python path")

    def build_extension(self, ext: Extension) -> None:
        try:
            super().build_extension(ext)
        except Exception as error:
            print(f"warning: {ext.name} not built ({error}); using the pure-Python path")


def _extensions() -> list[Extension]:
    folder = os.path.join("formats", "lethe_formats", "records")
    modules = ("_cscan", "_ccolumns")
    return [
        Extension(
            f"lethe_formats.records.{name}",
            sources=[os.path.join(folder, f"{name}.c")],
            extra_compile_args=["-O3"],
        )
        for name in modules
        if os.path.exists(os.path.join(folder, f"{name}.c"))
    ]


packages, package_dir = _packages()
setup(
    packages=packages,
    package_dir=package_dir,
    package_data={
        "lethe_formats": ["py.typed", "ksy/*.ksy"],
        "lethe_reference": ["py.typed"],
        "lethe_conformance": ["py.typed", "launchers/*.toml", "launchers/*.md"],
        "lethe_tools": ["py.typed"],
        "lethe_fixtures": ["**/*", "**/.*"],
    },
    ext_modules=_extensions(),
    cmdclass={"build_ext": OptionalBuildExt},
)
