"""``pom.xml`` (expat, the parser under ``xml.etree``, for its line numbers) and
``build.gradle``/``build.gradle.kts`` (regex): Java, Maven, dependencies, modules, and the
runner goals of the compiler/surefire/checkstyle plugins."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from xml.parsers import expat

from ctxfast.recon.manifest._common import Collector, ManifestParseError, Source

PM_MAVEN = 8

#: Maven plugin artifactId → (canonical runner, command).
PLUGIN_GOALS = {
    "maven-compiler-plugin": ("build", "mvn compile"),
    "maven-surefire-plugin": ("test", "mvn test"),
    "maven-checkstyle-plugin": ("lint", "mvn checkstyle:check"),
}


@dataclass
class _El:
    tag: str
    line: int
    text: str = ""
    children: list[_El] = field(default_factory=list)

    def find(self, *path: str) -> _El | None:
        node: _El | None = self
        for tag in path:
            node = next((c for c in node.children if c.tag == tag), None) if node else None
        return node

    def all(self, *path: str) -> list[_El]:
        parents = [self.find(*path[:-1])] if len(path) > 1 else [self]
        return [c for p in parents if p for c in p.children if c.tag == path[-1]]

    def value(self, tag: str) -> str | None:
        el = self.find(tag)
        return el.text.strip() if el and el.text.strip() else None


def _parse_xml(text: str) -> _El:
    parser = expat.ParserCreate()
    stack: list[_El] = []
    root: list[_El] = []

    def start(name: str, _attrs: dict[str, str]) -> None:
        el = _El(name.rsplit(":", 1)[-1].rsplit("}", 1)[-1], parser.CurrentLineNumber)
        (stack[-1].children if stack else root).append(el)
        stack.append(el)

    def end(_name: str) -> None:
        stack.pop()

    def chars(data: str) -> None:
        if stack:
            stack[-1].text += data

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = chars
    try:
        parser.Parse(text, True)
    except expat.ExpatError as exc:
        raise ManifestParseError(f"unparseable: {exc}", exc.lineno) from exc
    if not root:
        raise ManifestParseError("unparseable: empty XML document")
    return root[0]


def parse_pom(col: Collector, src: Source, root_level: bool) -> None:
    project = _parse_xml(src.text)
    if project.tag != "project":
        raise ManifestParseError(f"unparseable: root element is <{project.tag}>, not <project>", 1)
    props = project.find("properties")
    hint_el = None
    for key in ("maven.compiler.release", "maven.compiler.source", "java.version"):
        hint_el = props.find(key) if props else None
        if hint_el:
            break
    col.language(
        "java",
        hint_el.text.strip() if hint_el else None,
        src.ev(hint_el.line if hint_el else project.line),
    )
    for dep in project.all("dependencies", "dependency"):
        gid, aid = dep.value("groupId"), dep.value("artifactId")
        if not aid:
            continue
        kind = "dev" if dep.value("scope") == "test" else "runtime"
        a = dep.find("artifactId")
        col.dependency(
            f"{gid}:{aid}" if gid else aid,
            dep.value("version"),
            kind,
            src.ev(a.line if a else dep.line),
        )
    for module in project.all("modules", "module"):
        name = module.text.strip()
        if name:
            base = src.rel.rsplit("/", 1)[0] + "/" if "/" in src.rel else ""
            col.component(name, base + name, "package", src.ev(module.line))
    if not root_level:
        return
    aid_el = project.find("artifactId")
    anchor = aid_el.line if aid_el else project.line
    col.package_manager(PM_MAVEN, "maven", src.ev(anchor))
    plugins = project.all("build", "plugins", "plugin")
    seen = set()
    for plugin in plugins:
        aid = plugin.value("artifactId")
        if aid in PLUGIN_GOALS:
            runner, command = PLUGIN_GOALS[aid]
            a = plugin.find("artifactId")
            col.runner(2, runner, runner, command, src.ev(a.line if a else plugin.line))
            seen.add(runner)
            if runner == "test":
                col.test_framework("junit (maven-surefire)", src.ev(a.line if a else plugin.line))
    # Maven's default lifecycle binds surefire to `test` even when the plugin is not declared.
    if "test" not in seen:
        col.runner(2, "test", "test", "mvn test", src.ev(anchor))
        col.test_framework("junit (maven-surefire)", src.ev(anchor))
    if "build" not in seen:
        col.runner(2, "build", "build", "mvn package", src.ev(anchor))


_GRADLE_DEP = re.compile(
    r"""^\s*(implementation|api|compileOnly|runtimeOnly|testImplementation|testRuntimeOnly|"""
    r"""androidTestImplementation|kapt|annotationProcessor)\s*\(?\s*["']([^"':]+):([^"':]+)(?::([^"']+))?["']"""
)


def parse_gradle(col: Collector, src: Source, root_level: bool) -> None:
    """Gradle scripts are programs; only literal ``group:name:version`` lines are read."""
    lang_line = src.find_line(r"\b(kotlin\(|org\.jetbrains\.kotlin)")
    java_line = src.find_line(r"\b(java|application|java-library)\b")
    if lang_line:
        col.language("kotlin", None, src.ev(lang_line))
    if java_line or not lang_line:
        col.language("java", None, src.ev(java_line or 1))
    for i, line in enumerate(src.lines, start=1):
        m = _GRADLE_DEP.match(line)
        if m:
            kind = "dev" if m.group(1).startswith(("test", "androidTest")) else "runtime"
            col.dependency(f"{m.group(2)}:{m.group(3)}", m.group(4), kind, src.ev(i))
