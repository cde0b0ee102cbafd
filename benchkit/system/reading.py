"""Reading files a user names without trusting them: regular files only (a FIFO, a device or
a directory is an error at once, never a hang), and at most a bounded number of bytes read and
inflated (a gzip bomb stops at the cap). The cap is BENCHKIT_READ_LIMIT (bytes; K, M, G
suffixes), 1 GiB by default: it fits the largest real traces measured (a 153 MB trace, two of
them for trace-diff) with room."""
from __future__ import annotations

import io
import os
import re
import stat
import zlib
from pathlib import Path
from typing import BinaryIO, Callable

from benchkit.errors import InvalidArgumentError

READ_LIMIT_ENV = "BENCHKIT_READ_LIMIT"
DEFAULT_READ_LIMIT = 1 << 30
_SIZE = re.compile(r"^\s*(\d+)\s*([kmg]i?b?|b)?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
CHUNK = 1 << 20

# What a reader raises: a problem (str) -> the reader's own error naming the file.
Fail = Callable[[str], Exception]


def read_limit() -> int:
    """The cap on bytes read (and inflated) from one input file."""
    text = os.environ.get(READ_LIMIT_ENV)
    if not text:
        return DEFAULT_READ_LIMIT
    match = _SIZE.match(text)
    if not match or int(match.group(1)) < 1:
        raise InvalidArgumentError(READ_LIMIT_ENV, text, "a size in bytes such as 2G or 500M",
                                   message=f"{READ_LIMIT_ENV}={text!r} is not a size; set it "
                                           "to a number of bytes such as 2G or 500M")
    return int(match.group(1)) * _UNITS[(match.group(2) or "").lower()[:1]]


def _describe(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def open_regular(path: str | os.PathLike, fail: Fail) -> BinaryIO:
    """`path` opened for reading if it is a regular file. Opening never blocks (a FIFO with
    no writer is refused, not waited on); anything but a regular file is `fail`ed."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise fail("no such file; check the path") from None
    except IsADirectoryError:
        raise fail("is a directory; pass a file") from None
    except OSError as error:
        raise fail(f"cannot be read: {error.strerror}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise fail(f"is {_describe(mode)}, not a regular file; pass a file")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def _too_big(limit: int, what: str) -> str:
    return (f"holds more than {limit:,} bytes{what}, the most benchkit reads from one file; "
            f"set {READ_LIMIT_ENV} (e.g. {READ_LIMIT_ENV}=4G) to read more")


class BoundedReader(io.RawIOBase):
    """A stream of a file's content, inflated when it is gzip, that fails once more than
    `limit` bytes came out of it. Inflation goes a chunk at a time, so memory stays bounded
    whatever the file claims (for streaming parsers such as ijson, and for read_bounded)."""

    def __init__(self, raw: BinaryIO, fail: Fail, limit: int):
        self._raw, self._fail, self._limit = raw, fail, limit
        self._produced = 0
        self._input = raw.read(2)
        self._inflate = (zlib.decompressobj(16 + zlib.MAX_WBITS)
                         if self._input == b"\x1f\x8b" else None)
        self._pending = b""

    def _more_input(self) -> bytes:
        if self._input:
            data, self._input = self._input, b""
            return data if self._inflate is not None else data + self._raw.read(CHUNK)
        return self._raw.read(CHUNK)

    def _next(self) -> bytes:
        """The next piece of content (at most CHUNK bytes), b"" at the end."""
        while True:
            if self._inflate is None:
                out = self._more_input()
            else:
                data = self._inflate.unconsumed_tail or self._more_input()
                if not data:
                    if not self._inflate.eof:
                        raise self._fail("is a truncated or corrupt gzip file (it ends early); "
                                         "write it again")
                    return b""
                try:
                    out = self._inflate.decompress(data, CHUNK)
                except zlib.error as error:
                    raise self._fail(f"is a truncated or corrupt gzip file ({error})") from None
                if self._inflate.eof and self._inflate.unused_data:   # another gzip member
                    self._input = self._inflate.unused_data
                    self._inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
                if not out:
                    continue
            self._produced += len(out)
            if self._produced > self._limit:
                raise self._fail(_too_big(self._limit, " inflated" if self._inflate else ""))
            return out

    def readable(self) -> bool:
        """A readable stream."""
        return True

    def readinto(self, buffer) -> int:
        """Fill `buffer` with the next content; 0 at the end."""
        if not self._pending:
            self._pending = self._next()
        n = min(len(buffer), len(self._pending))
        buffer[:n] = self._pending[:n]
        self._pending = self._pending[n:]
        return n

    def close(self) -> None:
        """Close the file."""
        self._raw.close()
        super().close()


def open_bounded(path: str | os.PathLike, fail: Fail, limit: int | None = None) -> BinaryIO:
    """A buffered stream of `path`'s content (inflated if gzip), failing past the cap."""
    return io.BufferedReader(BoundedReader(open_regular(path, fail), fail,
                                           read_limit() if limit is None else limit), CHUNK)


def read_bounded(path: str | os.PathLike, fail: Fail, limit: int | None = None) -> bytes:
    """`path`'s whole content (inflated if gzip), at most the cap."""
    with open_bounded(path, fail, limit) as stream:
        return stream.read()


def display(path: str | os.PathLike) -> str:
    """How a path is named in messages."""
    return str(Path(path))
