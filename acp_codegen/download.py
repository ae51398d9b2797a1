"""Downloads: a package tarball through the `npm` client, a file over HTTP(S).

Owns talking to the network (never a hard-coded registry address: npm finds its registry
itself). Returns bytes or raises a `fetch-failed` diagnostic naming the source; verifying and
caching what was downloaded is `acp_codegen.sources`' job.
"""

from __future__ import annotations

import http.client
import io
import os
import shutil
import subprocess
import tarfile
import tempfile
import urllib.error
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING

from acp_codegen import __version__
from acp_codegen.errors import fail
from acp_codegen.progress import step

if TYPE_CHECKING:
    from acp_codegen.sources import NpmSource

NPM_TIMEOUT_SECONDS = 180.0
HTTP_TIMEOUT_SECONDS = 20.0


def npm_pack(spec: NpmSource) -> bytes:
    """Download a package tarball with the npm client."""
    npm = shutil.which("npm")
    what = f"{spec.package}@{spec.version}"
    if npm is None:
        raise fail(
            "fetch-failed", f"cannot fetch {what}: the `npm` client is not on PATH", file=spec.text
        )
    env = {**os.environ, "npm_config_update_notifier": "false", "npm_config_fund": "false"}
    with tempfile.TemporaryDirectory(prefix="acp-codegen-npm-") as tmp:
        command = [npm, "pack", what, "--pack-destination", tmp, "--silent", "--loglevel=error"]
        try:
            with step(f"fetching {what} (npm pack)"):
                done = subprocess.run(
                    command,
                    cwd=tmp,
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=NPM_TIMEOUT_SECONDS,
                    check=False,
                )
        except (subprocess.TimeoutExpired, OSError) as exc:
            raise fail("fetch-failed", f"`npm pack {what}`: {exc}", file=spec.text) from None
        if done.returncode != 0:
            raise fail(
                "fetch-failed",
                f"`npm pack {what}` failed (exit {done.returncode}): "
                f"{_npm_reason(done.stderr)}",
                file=spec.text,
            )
        tarballs = list(Path(tmp).glob("*.tgz"))
        if len(tarballs) != 1:
            raise fail(
                "fetch-failed", f"`npm pack {what}` left {len(tarballs)} tarballs", file=spec.text
            )
        return tarballs[0].read_bytes()


def _npm_reason(stderr: str) -> str:
    """The first informative line of npm's error output (skipping `npm error code E404`)."""
    lines = [line.removeprefix("npm error").strip() for line in stderr.splitlines()]
    lines = [line for line in lines if line]
    fallback = lines[0] if lines else "no error output"
    return next((line for line in lines if not line.startswith("code ")), fallback)


def extract(blob: bytes, spec: NpmSource) -> bytes:
    """`package/<path>` out of an npm tarball."""
    what = f"{spec.package}@{spec.version}"
    try:
        with tarfile.open(fileobj=io.BytesIO(blob), mode="r:gz") as tar:
            try:
                member = tar.extractfile(f"package/{spec.path}")
            except KeyError:
                member = None
            if member is None:
                raise fail("fetch-failed", f"{what} has no file {spec.path}", file=spec.text)
            return member.read()
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise fail(
            "fetch-failed", f"cannot read the tarball of {what}: {exc}", file=spec.text
        ) from None


def http_get(url: str, label: str) -> bytes:
    """The body of a GET request (redirects followed)."""
    request = urllib.request.Request(url, headers={"User-Agent": f"acp-codegen/{__version__}"})
    try:
        with (
            step(f"fetching {url}"),
            urllib.request.urlopen(request, timeout=HTTP_TIMEOUT_SECONDS) as response,
        ):
            data: bytes = response.read()
            return data
    except urllib.error.HTTPError as exc:
        reason = f"HTTP {exc.code} {exc.reason}"
    except urllib.error.URLError as exc:
        reason = str(exc.reason)
    except (http.client.HTTPException, OSError) as exc:
        reason = str(exc) or type(exc).__name__
    raise fail("fetch-failed", f"cannot fetch {url}: {reason}", file=label)
