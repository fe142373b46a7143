"""A local stand-in for the Hugging Face Hub: serves folders as dataset repos over HTTP on 127.0.0.1.

It speaks the part of the Hub protocol that `huggingface_hub` uses to read a dataset repo:
`GET /api/datasets/{repo}[/revision/{rev}]` (repo info with the commit sha and siblings) and
`HEAD`/`GET /datasets/{repo}/resolve/{rev}/{path}` with `X-Repo-Commit`, `ETag` and
`Content-Length`. Large files (zip, parquet) are answered like LFS files on the real Hub: a 302 to
a different host (`localhost` instead of `127.0.0.1`, i.e. a "CDN") carrying `X-Linked-Etag` and
`X-Linked-Size`. Errors carry the `X-Error-Code` the client maps to its exceptions
(RepoNotFound, RevisionNotFound, EntryNotFound). A repo may require a bearer token (private).

It also speaks the write protocol `huggingface_hub` uses for small regular (non-LFS) files, enough
for `create_repo`, `create_commit` and a `CommitScheduler`: `POST /api/repos/create` (dataset repos,
409 with the repo URL when it exists), `POST /api/datasets/{repo}/preupload/{rev}` (every file
"regular", none ignored, with the git oid of the file already there) and
`POST /api/datasets/{repo}/commit/{rev}` (an NDJSON header line, then `file` lines with base64
content and `deletedFile` lines), which writes into the repo's folder and bumps its commit id.
Writes need a bearer token, and a private repo's own token.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

LFS_SUFFIXES = (".zip", ".parquet")
MAIN = "main"


@dataclass
class StandinRepo:
    folder: Path
    token: str | None = None
    """When set, the repo is private: requests must send `Authorization: Bearer <token>`."""
    commits: int = 0
    """How many commits were written over the API; part of the commit id, so that each one bumps it."""

    @property
    def commit(self) -> str:
        """A 40-hex commit id derived from the commits written and the folder's file names and sizes."""
        digest = hashlib.sha1(f"{self.commits}\n".encode())
        for name, size in sorted(self.files().items()):
            digest.update(f"{name}\0{size}\n".encode())
        return digest.hexdigest()

    def files(self) -> dict[str, int]:
        return {
            path.relative_to(self.folder).as_posix(): path.stat().st_size
            for path in sorted(self.folder.rglob("*"))
            if path.is_file()
        }


@dataclass
class HubStandin:
    """Run with `with HubStandin({"owner/name": StandinRepo(folder)}) as hub:`; point clients at `hub.url`."""

    repos: dict[str, StandinRepo]
    root: Path | None = None
    """Where repos created over the API get their folder (`root/owner/name`); None refuses creation."""
    requests: list[tuple[str, str]] = field(default_factory=list)
    write_lock: threading.Lock = field(default_factory=threading.Lock)
    _server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._server is not None, "the stand-in is not running"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def cdn_url(self) -> str:
        assert self._server is not None, "the stand-in is not running"
        return f"http://localhost:{self._server.server_address[1]}"

    def downloads(self, suffix: str = "") -> list[str]:
        """Paths of the file bodies served (GET on a file), optionally only those ending in `suffix`."""
        return [path for method, path in self.requests if method == "GET-FILE" and path.endswith(suffix)]

    def __enter__(self) -> HubStandin:
        standin = self

        class Handler(_Handler):
            hub = standin

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()
        self._server = None


class _Handler(BaseHTTPRequestHandler):
    hub: HubStandin
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        """Silence the default per-request stderr log."""

    def do_HEAD(self) -> None:
        self._route(send_body=False)

    def do_GET(self) -> None:
        self._route(send_body=True)

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        path = unquote(urlsplit(self.path).path)
        parts = path.strip("/").split("/")
        self.hub.requests.append(("POST", path))
        if parts == ["api", "repos", "create"]:
            self._create_repo(json.loads(body))
        elif parts[:2] == ["api", "datasets"] and len(parts) == 6 and parts[4] == "preupload":
            self._preupload("/".join(parts[2:4]), parts[5], json.loads(body))
        elif parts[:2] == ["api", "datasets"] and len(parts) == 6 and parts[4] == "commit":
            self._apply_commit("/".join(parts[2:4]), parts[5], body)
        else:
            self._error(404, "NotFound", f"no route for POST {path}")

    def _route(self, send_body: bool) -> None:
        path = unquote(urlsplit(self.path).path)
        parts = path.strip("/").split("/")
        if parts[:2] == ["api", "datasets"] and len(parts) >= 4:
            self._repo_info(parts[2:])
        elif parts[:1] == ["datasets"] and len(parts) >= 6 and parts[3] == "resolve":
            self._resolve("/".join(parts[1:3]), parts[4], "/".join(parts[5:]), send_body)
        elif parts[:1] == ["cdn"] and len(parts) >= 5:
            self._cdn("/".join(parts[1:3]), parts[3], "/".join(parts[4:]), send_body)
        else:
            self._error(404, "NotFound", f"no route for {path}")

    def _repo(self, repo_id: str) -> StandinRepo | None:
        repo = self.hub.repos.get(repo_id)
        if repo is None:
            self._error(404, "RepoNotFound", f"repository {repo_id} not found")
            return None
        if repo.token and self.headers.get("Authorization") != f"Bearer {repo.token}":
            self._error(401, "RepoNotFound", f"repository {repo_id} not found")
            return None
        return repo

    def _bearer(self) -> str | None:
        authorization = self.headers.get("Authorization", "")
        return authorization.removeprefix("Bearer ") if authorization.startswith("Bearer ") else None

    def _writable(self, repo_id: str, revision: str) -> StandinRepo | None:
        """The repo when the request may write to `revision` of it; otherwise None, the error already sent."""
        if self._bearer() is None:
            self._error(401, "Unauthorized", "writing needs a token")
            return None
        repo = self._repo(repo_id)
        if repo is None or self._commit(repo, revision) is None:
            return None
        return repo

    def _create_repo(self, payload: dict[str, object]) -> None:
        """Create the dataset repo `organization/name`, private with the caller's token when asked."""
        repo_id = f"{payload.get('organization')}/{payload.get('name')}"
        token = self._bearer()
        if token is None:
            self._error(401, "Unauthorized", "creating a repo needs a token")
        elif payload.get("type") != "dataset" or not payload.get("organization"):
            self._error(400, "BadRequest", "the stand-in creates dataset repos with an owner only")
        elif repo_id in self.hub.repos:
            if self._repo(repo_id) is not None:
                self._json(409, {"error": "You already created this dataset repo", "url": self._url(repo_id)})
        elif self.hub.root is None:
            self._error(403, "Forbidden", "this stand-in does not create repos")
        else:
            folder = self.hub.root / repo_id
            folder.mkdir(parents=True, exist_ok=True)
            private = payload.get("visibility") == "private"
            self.hub.repos[repo_id] = StandinRepo(folder, token=token if private else None)
            self._json(200, {"url": self._url(repo_id), "name": repo_id})

    def _preupload(self, repo_id: str, revision: str, payload: dict[str, list[dict[str, object]]]) -> None:
        """Answer every file as a regular upload, not ignored, with the git oid of the file it replaces."""
        repo = self._writable(repo_id, revision)
        if repo is None:
            return
        answers = []
        for entry in payload.get("files", []):
            existing = _file_in(repo.folder, str(entry["path"]))
            oid = _git_oid(existing.read_bytes()) if existing else None
            answer = {"path": entry["path"], "uploadMode": "regular", "shouldIgnore": False, "oid": oid}
            answers.append(answer)
        self._json(200, {"files": answers, "commitOid": repo.commit})

    def _apply_commit(self, repo_id: str, revision: str, body: bytes) -> None:
        """Write the NDJSON commit's files into the repo folder (all or none) and bump the commit id."""
        repo = self._writable(repo_id, revision)
        if repo is None:
            return
        with self.hub.write_lock:
            changes = self._commit_changes(repo.folder, body)
            if changes is None:
                return
            for path, content in changes:
                if content is None:
                    path.unlink()
                else:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_bytes(content)
            repo.commits += 1
            oid = repo.commit
        url = f"{self.hub.url}/datasets/{repo_id}/commit/{oid}"
        self._json(200, {"success": True, "commitOid": oid, "commitUrl": url, "hookOutput": ""})

    def _commit_changes(self, folder: Path, body: bytes) -> list[tuple[Path, bytes | None]] | None:
        """The commit's (path, content) writes, content None for a deletion; None (error sent) if invalid."""
        lines = [json.loads(line) for line in body.splitlines() if line.strip()]
        if not lines or lines[0].get("key") != "header":
            self._error(400, "BadRequest", "a commit starts with a header line")
            return None
        changes: list[tuple[Path, bytes | None]] = []
        for line in lines[1:]:
            key, value = line.get("key"), line.get("value", {})
            path = _path_in(folder, value.get("path", ""))
            if key not in ("file", "deletedFile") or path is None or path == folder.resolve():
                self._error(400, "BadRequest", f"the stand-in cannot commit {key} {value.get('path')!r}")
                return None
            if key == "deletedFile" and not path.is_file():
                self._error(404, "EntryNotFound", f"A file with this name doesn't exist: {value['path']}")
                return None
            changes.append((path, base64.b64decode(value["content"]) if key == "file" else None))
        return changes

    def _url(self, repo_id: str) -> str:
        return f"{self.hub.url}/datasets/{repo_id}"

    def _commit(self, repo: StandinRepo, revision: str) -> str | None:
        if revision in (MAIN, repo.commit):
            return repo.commit
        self._error(404, "RevisionNotFound", f"revision {revision} not found", commit=None)
        return None

    def _repo_info(self, parts: list[str]) -> None:
        repo_id = "/".join(parts[:2])
        revision = parts[3] if len(parts) >= 4 and parts[2] == "revision" else MAIN
        self.hub.requests.append(("GET", f"/api/datasets/{repo_id}/revision/{revision}"))
        repo = self._repo(repo_id)
        if repo is None or self._commit(repo, revision) is None:
            return
        body = json.dumps(
            {
                "id": repo_id,
                "sha": repo.commit,
                "private": bool(repo.token),
                "siblings": [{"rfilename": name, "size": size} for name, size in repo.files().items()],
            }
        ).encode()
        self._send(200, {"Content-Type": "application/json", "X-Repo-Commit": repo.commit}, body, True)

    def _resolve(self, repo_id: str, revision: str, name: str, send_body: bool) -> None:
        self.hub.requests.append((self.command, f"{repo_id}/{name}"))
        repo = self._repo(repo_id)
        commit = self._commit(repo, revision) if repo else None
        if repo is None or commit is None:
            return
        path = _file_in(repo.folder, name)
        if path is None:
            self._error(404, "EntryNotFound", f"{name} does not exist at {revision}", commit=commit)
            return
        etag = f'"{_sha256(path)}"'
        if name.endswith(LFS_SUFFIXES):
            headers = {
                "Location": f"{self.hub.cdn_url}/cdn/{repo_id}/{commit}/{name}",
                "X-Repo-Commit": commit,
                "ETag": f'"{hashlib.sha1(name.encode()).hexdigest()}"',
                "X-Linked-Etag": etag,
                "X-Linked-Size": str(path.stat().st_size),
            }
            self._send(302, headers, b"", False)
            return
        self._serve_file(path, {"X-Repo-Commit": commit, "ETag": etag}, send_body, f"{repo_id}/{name}")

    def _cdn(self, repo_id: str, commit: str, name: str, send_body: bool) -> None:
        repo = self.hub.repos.get(repo_id)
        path = _file_in(repo.folder, name) if repo and commit == repo.commit else None
        if path is None:
            self._error(404, "NotFound", "no such object")
            return
        self._serve_file(path, {"ETag": f'"{_sha256(path)}"'}, send_body, f"{repo_id}/{name}")

    def _serve_file(self, path: Path, headers: dict[str, str], send_body: bool, label: str) -> None:
        if send_body:
            self.hub.requests.append(("GET-FILE", label))
        headers = {**headers, "Content-Type": "application/octet-stream"}
        self._send(200, headers, path.read_bytes() if send_body else b"", send_body, path.stat().st_size)

    def _json(self, status: int, payload: dict[str, object]) -> None:
        self._send(status, {"Content-Type": "application/json"}, json.dumps(payload).encode(), True)

    def _error(self, status: int, code: str, message: str, commit: str | None = None) -> None:
        headers = {"X-Error-Code": code, "X-Error-Message": message, "Content-Type": "application/json"}
        if commit:
            headers["X-Repo-Commit"] = commit
        self._send(status, headers, json.dumps({"error": message}).encode(), self.command != "HEAD")

    def _send(
        self, status: int, headers: dict[str, str], body: bytes, send_body: bool, length: int | None = None
    ) -> None:
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body) if length is None else length))
        self.end_headers()
        if send_body and body:
            self.wfile.write(body)


def _path_in(folder: Path, name: str) -> Path | None:
    """`folder/name` resolved, or None when it would lie outside `folder`."""
    path = (folder / name).resolve()
    return path if path.is_relative_to(folder.resolve()) else None


def _file_in(folder: Path, name: str) -> Path | None:
    path = _path_in(folder, name)
    return path if path is not None and path.is_file() else None


def _git_oid(content: bytes) -> str:
    """The git blob id of `content`, the oid the Hub reports for a regular file."""
    return hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
