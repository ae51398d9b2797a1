"""Tests for source specs, fetching (local, cache, shared directory, npm), loading and pins."""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import tarfile
from pathlib import Path

import pytest

from acp_codegen.errors import CodegenError
from acp_codegen.load import load_document, load_source
from acp_codegen.pins import Pin, PinnedSource, default_pin_path, load_pins
from acp_codegen.sources import (
    Fetched,
    GithubSource,
    NpmSource,
    PathSource,
    UrlSource,
    default_cache_dir,
    default_shared_dir,
    fetch,
    parse_source,
    project_root,
    pull,
)

DRAFT = "npm:@agentclientprotocol/sdk@2.4.0#schema/v2/schema.unstable.json"
DRAFT_SHA = "49e10f8c1935854363ed5b176cc6560d856642ba5020c97d264d34de4b6f1b31"
needs_npm = pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not on PATH")


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def codes(exc: pytest.ExceptionInfo[CodegenError]) -> list[str]:
    return [d.code for d in exc.value.diagnostics]


# --- parse_source ---------------------------------------------------------------------------


def test_parse_npm_scoped() -> None:
    spec = parse_source(DRAFT)
    assert spec == NpmSource(
        DRAFT, "@agentclientprotocol/sdk", "2.4.0", "schema/v2/schema.unstable.json"
    )
    assert spec.kind == "npm"


def test_parse_npm_unscoped() -> None:
    spec = parse_source("npm:left-pad@1.3.0#index.js")
    assert isinstance(spec, NpmSource)
    assert (spec.package, spec.version, spec.path) == ("left-pad", "1.3.0", "index.js")


def test_parse_github() -> None:
    text = "github:agentclientprotocol/agent-client-protocol@b4edad80#schema/v2/schema.json"
    spec = parse_source(text)
    assert isinstance(spec, GithubSource)
    assert (spec.owner, spec.repo, spec.commit) == (
        "agentclientprotocol",
        "agent-client-protocol",
        "b4edad80",
    )
    assert spec.url == (
        "https://raw.githubusercontent.com/agentclientprotocol/"
        "agent-client-protocol/b4edad80/schema/v2/schema.json"
    )


def test_parse_url_and_path() -> None:
    assert parse_source("https://example.org/s.json") == UrlSource(
        "https://example.org/s.json", "https://example.org/s.json"
    )
    assert isinstance(parse_source("http://example.org/s.json"), UrlSource)
    assert parse_source("schema/x.json") == PathSource("schema/x.json", Path("schema/x.json"))
    assert parse_source("/abs/x.json").kind == "path"


@pytest.mark.parametrize(
    "text",
    [
        "npm:@agentclientprotocol/sdk#schema.json",  # no version
        "npm:@agentclientprotocol/sdk@2.4.0",  # no path
        "npm:@agentclientprotocol/sdk@2.4.0#",  # empty path
        "npm:@agentclientprotocol/sdk@2.4.0#../etc/passwd",
        "npm:@agentclientprotocol/sdk@2.4.0#/abs.json",
        "npm:sdk@@2.4.0#a.json",
        "npm:-rf@1.0.0#a.json",
        "npm:",
        "github:owner@abc#a.json",  # no repo
        "github:owner/repo#a.json",  # no commit
        "github:owner/repo@abc",  # no path
        "github:owner/repo@abc#a//b.json",
        "github:",
    ],
)
def test_parse_malformed(text: str) -> None:
    with pytest.raises(CodegenError) as exc:
        parse_source(text)
    assert codes(exc) == ["bad-source"]


# --- fetch: local, cache, shared -------------------------------------------------------------


def test_fetch_local(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_bytes(b'{"a": 1}')
    got = fetch(
        parse_source(str(path)), expected_sha256=None, cache_dir=tmp_path / "c", shared_dir=None
    )
    assert (got.data, got.sha256, got.origin, got.label) == (
        b'{"a": 1}',
        sha(b'{"a": 1}'),
        "local",
        str(path),
    )
    assert not (tmp_path / "c").exists()


def test_fetch_local_relative_to_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "s.json").write_bytes(b"{}")
    monkeypatch.chdir(tmp_path)
    assert load_source("s.json", cache_dir=tmp_path / "c").document == {}


def test_fetch_local_missing_and_mismatch(tmp_path: Path) -> None:
    with pytest.raises(CodegenError) as exc:
        fetch(
            parse_source("no/such.json"), expected_sha256=None, cache_dir=tmp_path, shared_dir=None
        )
    assert codes(exc) == ["file-not-found"]
    assert exc.value.diagnostics[0].file == "no/such.json"
    path = tmp_path / "s.json"
    path.write_bytes(b"{}")
    with pytest.raises(CodegenError) as exc:
        fetch(
            parse_source(str(path)), expected_sha256="0" * 64, cache_dir=tmp_path, shared_dir=None
        )
    assert codes(exc) == ["sha256-mismatch"]


def make_shared(root: Path, files: dict[str, bytes], claimed: dict[str, str] | None = None) -> Path:
    """A fake shared directory: `rev/<name>` files and a manifest (claimed sha256s if given)."""
    (root / "rev").mkdir(parents=True)
    for name, data in files.items():
        (root / "rev" / name).write_bytes(data)
    shas = {name: (claimed or {}).get(name, sha(data)) for name, data in files.items()}
    manifest = {"revisions": [{"id": "rev", "files": shas}]}
    (root / "manifest.json").write_text(json.dumps(manifest))
    return root


def test_fetch_from_shared_then_cache(tmp_path: Path) -> None:
    data = b'{"title": "draft"}'
    shared = make_shared(tmp_path / "shared", {"schema.unstable.json": data})
    cache = tmp_path / "cache"
    spec = parse_source(DRAFT.replace("2.4.0", "0.0.0-test"))
    first = fetch(spec, expected_sha256=sha(data), cache_dir=cache, shared_dir=shared)
    assert (first.origin, first.data, first.label) == ("shared", data, spec.text)
    assert (cache / sha(data)).read_bytes() == data
    assert [p.name for p in cache.iterdir()] == [sha(data)]  # no temp files left behind
    second = fetch(spec, expected_sha256=sha(data), cache_dir=cache, shared_dir=None, offline=True)
    assert (second.origin, second.data) == ("cache", data)


def test_shared_dir_from_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = b'{"x": []}'
    shared = make_shared(tmp_path / "shared", {"s.json": data})
    monkeypatch.setenv("ACP_CODEGEN_SHARED", str(shared))
    monkeypatch.setenv("ACP_CODEGEN_CACHE", str(tmp_path / "cache"))
    assert default_shared_dir() == shared
    assert default_cache_dir() == tmp_path / "cache"
    loaded = load_source("https://example.invalid/s.json", expected_sha256=sha(data), offline=True)
    assert loaded.document == {"x": []}
    assert (tmp_path / "cache" / sha(data)).exists()


def test_shared_dir_without_manifest(tmp_path: Path) -> None:
    data = b'{"y": 2}'
    shared = make_shared(tmp_path / "shared", {"s.json": data})
    (shared / "manifest.json").unlink()
    got = fetch(
        parse_source("https://example.invalid/s.json"),
        expected_sha256=sha(data),
        cache_dir=tmp_path / "cache",
        shared_dir=shared,
        offline=True,
    )
    assert got.origin == "shared"


def test_shared_sha_mismatch_writes_nothing(tmp_path: Path) -> None:
    claimed = "ab" * 32
    shared = make_shared(tmp_path / "shared", {"s.json": b"{}"}, claimed={"s.json": claimed})
    cache = tmp_path / "cache"
    with pytest.raises(CodegenError) as exc:
        fetch(
            parse_source("https://example.invalid/s.json"),
            expected_sha256=claimed,
            cache_dir=cache,
            shared_dir=shared,
            offline=True,
        )
    assert codes(exc) == ["sha256-mismatch"]
    message = exc.value.diagnostics[0].message
    assert claimed in message and sha(b"{}") in message and "(read from shared)" in message
    assert "example.invalid" in (exc.value.diagnostics[0].file or "")
    assert not cache.exists() or not any(cache.rglob("*"))


def test_corrupt_cache_entry_is_ignored(tmp_path: Path) -> None:
    data = b'{"ok": true}'
    shared = make_shared(tmp_path / "shared", {"s.json": data})
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / sha(data)).write_bytes(b"garbage")
    got = fetch(
        parse_source("https://example.invalid/s.json"),
        expected_sha256=sha(data),
        cache_dir=cache,
        shared_dir=shared,
        offline=True,
    )
    assert got.origin == "shared"
    assert (cache / sha(data)).read_bytes() == data


def test_offline_miss_and_unreachable_url(tmp_path: Path) -> None:
    with pytest.raises(CodegenError) as exc:
        fetch(
            parse_source("https://example.invalid/s.json"),
            expected_sha256="0" * 64,
            cache_dir=tmp_path,
            shared_dir=None,
            offline=True,
        )
    assert codes(exc) == ["fetch-failed"]
    with pytest.raises(CodegenError) as exc:
        fetch(
            parse_source("http://127.0.0.1:9/s.json"),
            expected_sha256=None,
            cache_dir=tmp_path,
            shared_dir=None,
        )
    assert codes(exc) == ["fetch-failed"]
    assert "http://127.0.0.1:9/s.json" in exc.value.diagnostics[0].message


# --- npm -------------------------------------------------------------------------------------


def fake_tarball(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(f"package/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def test_npm_tarball_cache_serves_files_offline(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    (cache / "npm").mkdir(parents=True)
    tgz = fake_tarball({"a.json": b"[1]", "b/c.json": b"{}"})
    (cache / "npm" / "@scope%2Fpkg@1.0.0.tgz").write_bytes(tgz)
    a = fetch(
        parse_source("npm:@scope/pkg@1.0.0#a.json"),
        expected_sha256=None,
        cache_dir=cache,
        shared_dir=None,
        offline=True,
    )
    c = fetch(
        parse_source("npm:@scope/pkg@1.0.0#b/c.json"),
        expected_sha256=sha(b"{}"),
        cache_dir=cache,
        shared_dir=None,
        offline=True,
    )
    assert (a.data, a.origin, c.data) == (b"[1]", "cache", b"{}")
    with pytest.raises(CodegenError) as exc:
        fetch(
            parse_source("npm:@scope/pkg@1.0.0#missing.json"),
            expected_sha256=None,
            cache_dir=cache,
            shared_dir=None,
            offline=True,
        )
    assert codes(exc) == ["fetch-failed"]
    assert "missing.json" in exc.value.diagnostics[0].message


@needs_npm
def test_npm_missing_package(tmp_path: Path) -> None:
    with pytest.raises(CodegenError) as exc:
        fetch(
            parse_source("npm:@agentclientprotocol/no-such-package-zz9@1.0.0#x.json"),
            expected_sha256=None,
            cache_dir=tmp_path,
            shared_dir=None,
        )
    assert codes(exc) == ["fetch-failed"]
    message = exc.value.diagnostics[0].message
    assert "npm pack @agentclientprotocol/no-such-package-zz9@1.0.0" in message
    assert "404" in message
    assert not any(tmp_path.rglob("*"))


@needs_npm
def test_npm_pack_matches_pin(tmp_path: Path) -> None:
    pins = load_pins(default_pin_path())
    draft, v2 = pins.get("acp_v2_draft"), pins.get("acp_v2")
    assert draft is not None and v2 is not None
    got = fetch(
        parse_source(draft.source),
        expected_sha256=draft.sha256,
        cache_dir=tmp_path,
        shared_dir=None,
    )
    assert (got.sha256, got.origin) == (draft.sha256, "network")
    assert (tmp_path / draft.sha256).exists()
    assert len(list((tmp_path / "npm").glob("*.tgz"))) == 1
    # a second file of the same package comes from the cached tarball: no second `npm pack`
    again = fetch(
        parse_source(v2.source),
        expected_sha256=v2.sha256,
        cache_dir=tmp_path,
        shared_dir=None,
        offline=True,
    )
    assert (again.sha256, again.origin) == (v2.sha256, "cache")


# --- load -------------------------------------------------------------------------------------


def fetched(data: bytes, label: str = "broken.json") -> Fetched:
    return Fetched(data, sha(data), label, label, "local")


def test_load_document_keeps_order() -> None:
    loaded = load_document(fetched(b'{"b": 1, "a": {"d": 2, "c": 3}}'))
    assert list(loaded.document) == ["b", "a"]
    assert list(loaded.document["a"]) == ["d", "c"]
    assert loaded.raw == b'{"b": 1, "a": {"d": 2, "c": 3}}'


def test_invalid_json_has_line_and_column() -> None:
    with pytest.raises(CodegenError) as exc:
        load_document(fetched(b'{\n  "a": 1,\n  "b": ]\n}'))
    diag = exc.value.diagnostics[0]
    assert (diag.code, diag.file) == ("invalid-json", "broken.json")
    assert "line 3, column 8" in diag.message


def test_invalid_utf8_and_not_object() -> None:
    with pytest.raises(CodegenError) as exc:
        load_document(fetched(b'{"a":\n "\xff"}'))
    assert codes(exc) == ["invalid-json"]
    assert "line 2, column 3" in exc.value.diagnostics[0].message
    with pytest.raises(CodegenError) as exc:
        load_document(fetched(b"[1, 2]"))
    assert codes(exc) == ["not-acp"]
    assert "array" in exc.value.diagnostics[0].message


# --- pins -------------------------------------------------------------------------------------


def test_real_pin_file() -> None:
    pins = load_pins(default_pin_path())
    assert default_pin_path() == project_root() / "schema" / "pins.toml"
    assert [p.name for p in pins] == ["acp_v2_draft", "acp_v2", "acp_v1"]
    assert pins.default == "acp_v2_draft"
    draft = pins.default_pin
    assert (draft.source, draft.sha256, draft.package) == (DRAFT, DRAFT_SHA, "acp_v2_draft")
    assert len(draft.history) == 11
    assert draft.history[0].source.startswith("github:agentclientprotocol/")
    assert draft.history[-1] == PinnedSource(
        "npm:@agentclientprotocol/sdk@2.2.0#schema/v2/schema.unstable.json",
        "67d41c3c5f3320b99c27203f2b0381652ecc3428420b17f4ad5dbf4510c1f2b9",
    )
    assert pins.get("acp_v1") == Pin(
        "acp_v1",
        "acp_v1",
        "npm:@agentclientprotocol/sdk@2.4.0#schema/v1/schema.json",
        "0d0b1ca83c4872e5473f68926a894c7a8203b59b118e2a79bfe43dd76fbcbc1a",
        unstable=PinnedSource(
            "npm:@agentclientprotocol/sdk@2.4.0#schema/v1/schema.unstable.json",
            "ce7881d10c854bcac4f0e7d3a9ce4fb0f612ec0a09e64b572940beec4668c189",
        ),
    )
    assert pins.get("nope") is None


def test_history_is_in_shared_manifest_order() -> None:
    manifest = default_shared_dir() / "manifest.json"
    if not manifest.is_file():
        pytest.skip("no shared directory")
    revisions = json.loads(manifest.read_text())["revisions"]
    shas = [r["files"]["schema.unstable.json"] for r in revisions]
    assert [h.sha256 for h in load_pins(default_pin_path()).default_pin.history] == shas[:-1]
    assert shas[-1] == DRAFT_SHA


def test_pull_history_from_shared(tmp_path: Path) -> None:
    shared = default_shared_dir()
    if not (shared / "manifest.json").is_file():
        pytest.skip("no shared directory")
    draft = load_pins(default_pin_path()).default_pin
    got = pull([draft], tmp_path, shared, include_history=True, offline=True)
    assert [f.sha256 for f in got] == [draft.sha256] + [h.sha256 for h in draft.history]
    assert {f.origin for f in got} == {"shared"}


GOOD_TARGET = """
[[target]]
name = "t"
package = "pkg.sub"
source = "schema.json"
sha256 = "%s"
""" % ("a" * 64)


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("default = \n", "invalid TOML"),
        ("default = 't'\n", "at least one [[target]]"),
        ("default = 'x'\n" + GOOD_TARGET, "default target 'x'"),
        (GOOD_TARGET.replace('package = "pkg.sub"\n', ""), "target 't': missing key 'package'"),
        (GOOD_TARGET + GOOD_TARGET, "duplicate target name 't'"),
        (GOOD_TARGET.replace("pkg.sub", "pkg.class"), "target 't': package 'pkg.class' is not a"),
        (GOOD_TARGET.replace("pkg.sub", "pkg-sub"), "target 't': package 'pkg-sub' is not a"),
        (GOOD_TARGET.replace("a" * 64, "a" * 63), "target 't': sha256 must be 64 hex digits"),
        (GOOD_TARGET.replace("a" * 64, "g" * 64), "target 't': sha256 must be 64 hex digits"),
        (GOOD_TARGET.replace("schema.json", "npm:pkg#x"), "target 't': malformed npm source"),
        (GOOD_TARGET + "history = [{ source = 'a.json' }]\n", "target 't': missing key 'sha256'"),
        (GOOD_TARGET + "sah256 = 'x'\n", "target 't': unknown key 'sah256'"),
        (GOOD_TARGET + "unstable = 'u.json'\n", "target 't': 'unstable' must be an inline table"),
        (GOOD_TARGET + "unstable = { source = 'u.json' }\n", "target 't': missing key 'sha256'"),
        (
            GOOD_TARGET + "unstable = { source = 'u.json', sha256 = 'x' }\n",
            "target 't': sha256 must be 64 hex digits",
        ),
    ],
)
def test_broken_pin_files(tmp_path: Path, text: str, needle: str) -> None:
    path = tmp_path / "pins.toml"
    path.write_text(text)
    with pytest.raises(CodegenError) as exc:
        load_pins(path)
    assert all(d.code == "bad-pins" and d.file == str(path) for d in exc.value.diagnostics)
    assert any(needle in d.message for d in exc.value.diagnostics), exc.value


def test_minimal_pin_file(tmp_path: Path) -> None:
    path = tmp_path / "pins.toml"
    path.write_text(GOOD_TARGET.replace("a" * 64, "A" * 64))
    pins = load_pins(path)
    assert pins.default == "t"
    assert pins.default_pin.sha256 == "a" * 64
    assert pins.default_pin.history == ()
    with pytest.raises(CodegenError) as exc:
        load_pins(tmp_path / "missing.toml")
    assert codes(exc) == ["file-not-found"]
