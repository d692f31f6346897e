"""The page's sound as the evidence video's audio track, on the same clock as the screencast.

Chromium plays into a private PulseAudio daemon whose only output is a null sink; a recorder
captures that sink's monitor to a WAV file and notes when its first sample was rendered; at encode
time the WAV is muxed into the screen video shifted by (audio start - video start).

Three facts measured on Debian 12 (PulseAudio 16.1, Chromium 156, Playwright 1.65) shape this:

- Playwright adds ``--mute-audio`` to every headless launch, and a muted Chromium still opens its
  PulseAudio stream but writes silence into it. Launch with ``ignore_default_args=IGNORE_DEFAULT_ARGS``.
  No other flag is needed: new-headless Chromium plays to PulseAudio when ``PULSE_SERVER`` is set.
- A null sink renders up to 2 s ahead while idle. Without ``norewinds=1`` a new monitor stream
  waited up to 2 s for its first data (0.37-2.0 s in 13 of 14 tries); with it, 17-110 ms (20
  starts). Without rewinds the sink also never re-renders audio its monitor has already delivered
  when a new playback stream joins, so the monitor is a gap- and duplicate-free sequence: sample n
  was rendered at ``started_at + n / rate``.
- The sink is clocked by CLOCK_MONOTONIC, so that mapping does not drift against ``time.monotonic()``.
"""

from __future__ import annotations

import math
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import wave
from pathlib import Path
from types import TracebackType
from typing import IO, NamedTuple, Protocol, Self

import numpy as np

from evaluator.errors import ConfigError, EncoderUnavailableError, InfrastructureError

SAMPLE_RATE = 48_000
CHANNELS = 2
_SAMPLE_BYTES = 2  # s16le
_FRAME_BYTES = _SAMPLE_BYTES * CHANNELS

IGNORE_DEFAULT_ARGS = ("--mute-audio",)
"""Pass as Playwright's ``ignore_default_args``: its headless default ``--mute-audio`` silences the page."""

SILENCE_DBFS = -120.0
"""Level reported by :func:`audio_levels` for a window of digital silence (log of zero)."""

# sockaddr_un.sun_path is 108 bytes including the terminating NUL.
_MAX_SOCKET_PATH = 107


def _require(tool: str, package: str) -> str:
    found = shutil.which(tool)
    if found is None:
        raise InfrastructureError(f"{tool} is not installed: install Debian's '{package}' package (make setup does)")
    return found


class AudioSource(Protocol):
    """Something whose sound can be captured: a local :class:`AudioSink`, or one inside a sandbox."""

    def capture_command(self, latency_ms: int) -> list[str]:
        """argv of a process that writes the sound to stdout as raw s16le, :data:`SAMPLE_RATE` Hz, stereo."""
        ...


def parec_arguments(monitor: str, latency_ms: int) -> list[str]:
    """``parec``'s arguments (after the program name) for a raw capture of ``monitor``."""
    return ["--raw", f"--device={monitor}", "--format=s16le", f"--rate={SAMPLE_RATE}", f"--channels={CHANNELS}",
            f"--latency-msec={latency_ms}", "--client-name=evalgrid-recorder"]


class AudioSink:
    """A private PulseAudio daemon with one null sink, living in ``runtime_dir``.

    Everything the daemon writes (socket, runtime and state files, log) stays under
    ``runtime_dir``, so it runs the same as root or as an unprivileged user with a read-only root
    and a tmpfs ``/tmp``. Give Chromium ``{**os.environ, **sink.env}`` as its environment.
    """

    def __init__(self, runtime_dir: Path, *, sink_name: str = "evalgrid", start_timeout_s: float = 10.0) -> None:
        self.runtime_dir = runtime_dir.resolve()
        self.sink_name = sink_name
        self.socket_path = self.runtime_dir / "pulse.sock"
        if len(os.fsencode(self.socket_path)) > _MAX_SOCKET_PATH:
            raise ConfigError(
                f"{self.socket_path} is too long for a unix socket ({_MAX_SOCKET_PATH} bytes at most); "
                "give AudioSink a shorter runtime directory, e.g. one from tempfile.mkdtemp()"
            )
        self._timeout = start_timeout_s
        self._proc: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    @property
    def monitor(self) -> str:
        """Name of the PulseAudio source that carries everything played into the sink."""
        return f"{self.sink_name}.monitor"

    @property
    def server(self) -> str:
        """The daemon's address in ``PULSE_SERVER`` syntax."""
        return f"unix:{self.socket_path}"

    @property
    def env(self) -> dict[str, str]:
        """Variables a client (Chromium, parec) needs on top of its usual environment."""
        return {"PULSE_SERVER": self.server, "PULSE_SINK": self.sink_name}

    def capture_command(self, latency_ms: int) -> list[str]:
        """``parec`` on this sink's monitor, pointed at this daemon."""
        return [_require("env", "coreutils"), *(f"{k}={v}" for k, v in self.env.items()),
                _require("parec", "pulseaudio"), *parec_arguments(self.monitor, latency_ms)]

    @property
    def log_path(self) -> Path:
        """The daemon's own log, for diagnosing a start-up failure."""
        return self.runtime_dir / "pulseaudio.log"

    def start(self) -> None:
        """Start the daemon and wait until it accepts connections."""
        if self._proc is not None:
            return
        daemon = _require("pulseaudio", "pulseaudio")
        _require("parec", "pulseaudio")  # pulseaudio-utils, a dependency of Debian's pulseaudio
        for sub in ("home", "config", "state", "run"):
            (self.runtime_dir / sub).mkdir(parents=True, exist_ok=True)
        # The socket is anonymous-auth: the directory's mode is what keeps other users out.
        self.runtime_dir.chmod(0o700)
        self.socket_path.unlink(missing_ok=True)
        # Without these, pulseaudio reaches for $HOME/.config, /run/user/<uid> or /var/run/pulse,
        # which do not exist or are read-only inside the sandbox container.
        env = {
            **os.environ,
            "HOME": str(self.runtime_dir / "home"),
            "XDG_CONFIG_HOME": str(self.runtime_dir / "config"),
            "XDG_RUNTIME_DIR": str(self.runtime_dir / "run"),
            "PULSE_RUNTIME_PATH": str(self.runtime_dir / "run"),
            "PULSE_STATE_PATH": str(self.runtime_dir / "state"),
        }
        env.pop("PULSE_SERVER", None)
        cmd = [
            daemon, "--daemonize=no", "-n", "--exit-idle-time=-1", "--use-pid-file=no",
            # No user-wide config (-n), no realtime or nice requests (they need capabilities the
            # sandbox drops), and no shared memory (a few hundred KB/s does not need it, and memfd
            # or /dev/shm may be unavailable or tiny in a container).
            "--realtime=no", "--high-priority=no", "--disable-shm=yes", "--log-target=stderr", "--log-level=notice",
            f"--load=module-null-sink sink_name={self.sink_name} rate={SAMPLE_RATE} channels={CHANNELS} norewinds=1",
            f"--load=module-native-protocol-unix socket={self.socket_path} auth-anonymous=1 auth-cookie-enabled=0",
        ]
        # As root this per-user mode only logs a warning that pulseaudio is meant for --system;
        # --system would put its socket and state under /var/run/pulse, outside runtime_dir.
        self._log = self.log_path.open("ab")
        self._proc = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=self._log, stderr=self._log)
        self._wait_ready(self._proc)

    def _wait_ready(self, proc: subprocess.Popen[bytes]) -> None:
        deadline = time.monotonic() + self._timeout
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                break
            # The protocol module is loaded after the null sink, so a connectable socket means
            # the sink exists too.
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
                try:
                    probe.connect(str(self.socket_path))
                    return
                except OSError:
                    pass
            time.sleep(0.02)
        self.stop()
        tail = self.log_path.read_text(errors="replace").strip()[-800:] if self.log_path.exists() else ""
        raise InfrastructureError(
            f"pulseaudio did not start in {self._timeout:.0f} s; its log ({self.log_path}) says: {tail or '(empty)'}"
        )

    def stop(self) -> None:
        """Stop the daemon; safe to call twice."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            _end(proc)
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


class AudioCapture(NamedTuple):
    """A finished recording of the sink's monitor."""

    wav: Path
    """The WAV file: s16le, :data:`SAMPLE_RATE` Hz, :data:`CHANNELS` channels."""
    started_at: float
    """``time.monotonic()`` at which the first sample was rendered."""
    started_at_wall: float
    """The same instant on the ``time.time()`` clock (the screencast's clock)."""
    duration_s: float
    """Length of the recorded audio."""
    lag_s: float
    """How far the last data read trailed real time; more than a few tens of ms means samples were lost."""


class AudioRecorder:
    """Captures a source (a sink's monitor, through ``parec``) into ``wav``, timing the first sample.

    Timing: parec delivers the monitor in blocks of ``latency_ms``; the data read by instant t
    holds n frames, so the first frame was rendered no later than ``t - n / rate``. The smallest
    such bound over the whole recording is the start time. Checked against a tone the daemon
    itself starts (``pactl load-module module-sine``): its onset lands between the request and the
    reply, an error within one block (10 ms) either way.
    """

    def __init__(self, source: AudioSource, wav: Path, *, latency_ms: int = 10) -> None:
        self._source = source
        self._wav = wav
        self._latency_ms = latency_ms
        self._proc: subprocess.Popen[bytes] | None = None
        self._thread: threading.Thread | None = None
        self._frames = 0
        self._bound = math.inf
        self._last_read = 0.0
        self._first_data = threading.Event()
        self._error: BaseException | None = None
        self._errors: IO[bytes] | None = None
        self._clock_offset = 0.0

    @property
    def started_at(self) -> float:
        """``time.monotonic()`` of the first sample (``inf`` before any data arrived)."""
        return self._bound

    def start(self, *, timeout_s: float = 5.0) -> float:
        """Start capturing and wait for the first data; returns :attr:`started_at`.

        The wait was 17-110 ms (median 37) on this module's ``norewinds`` sink. Call it before the
        screencast starts, so that no part of the video precedes the audio.
        """
        self._wav.parent.mkdir(parents=True, exist_ok=True)
        cmd = self._source.capture_command(self._latency_ms)
        self._clock_offset = time.time() - time.monotonic()
        # stderr to a file, not a pipe: nobody drains a pipe during a long recording.
        self._errors = tempfile.TemporaryFile()
        self._proc = subprocess.Popen(
            cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=self._errors, bufsize=0,
        )
        # A thread, not the event loop: reads must not wait behind a busy loop, or the timing
        # bound loosens and PulseAudio's queue fills.
        stdout = self._proc.stdout
        assert stdout is not None  # noqa: S101 - stdout=PIPE above; narrows the type for mypy
        self._thread = threading.Thread(target=self._pump, args=(stdout,), name="evalgrid-audio", daemon=True)
        self._thread.start()
        self._first_data.wait(timeout_s)
        if self._frames == 0:
            code = self._proc.poll()
            detail = ""
            if code is not None:  # it has said all it will say
                self._errors.seek(0)
                detail = self._errors.read().decode(errors="replace").strip()[-300:]
            self._halt()
            said = detail or ("parec delivered nothing" if code is None else f"parec exited with {code}")
            raise InfrastructureError(f"no audio from `{' '.join(cmd[:4])} ...` within {timeout_s:.0f} s: {said}")
        return self._bound

    def _pump(self, stream: IO[bytes]) -> None:
        fd = stream.fileno()
        pending = b""
        try:
            with wave.open(str(self._wav), "wb") as out:
                out.setnchannels(CHANNELS)
                out.setsampwidth(_SAMPLE_BYTES)
                out.setframerate(SAMPLE_RATE)
                while chunk := os.read(fd, 65536):
                    now = time.monotonic()
                    data = pending + chunk
                    whole = len(data) - len(data) % _FRAME_BYTES
                    pending = data[whole:]
                    out.writeframesraw(data[:whole])
                    self._frames += whole // _FRAME_BYTES
                    self._bound = min(self._bound, now - self._frames / SAMPLE_RATE)
                    self._last_read = now
                    self._first_data.set()
        except BaseException as exc:  # noqa: BLE001 - re-raised by stop() in the caller's thread
            self._error = exc
        finally:
            self._first_data.set()  # also on an early EOF, so start() does not wait out its timeout

    def _halt(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            _end(proc)
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None
        if proc is not None and proc.stdout is not None:
            proc.stdout.close()
        if self._errors is not None:
            self._errors.close()
            self._errors = None

    def stop(self) -> AudioCapture:
        """Stop capturing, close the WAV file and describe what was captured."""
        self._halt()
        if self._error is not None:
            raise InfrastructureError(f"audio capture failed: {self._error}") from self._error
        duration = self._frames / SAMPLE_RATE
        lag = self._last_read - (self._bound + duration) if self._frames else 0.0
        return AudioCapture(
            wav=self._wav, started_at=self._bound, started_at_wall=self._bound + self._clock_offset,
            duration_s=duration, lag_s=lag,
        )


def _probe(path: Path, stream: str, entries: str) -> list[str]:
    ffprobe = _require("ffprobe", "ffmpeg")
    proc = subprocess.run(
        [ffprobe, "-v", "error", "-select_streams", stream, "-show_entries", f"stream={entries}", "-of", "csv=p=0",
         str(path)],
        capture_output=True, text=True, timeout=60, check=False,
    )
    if proc.returncode != 0:
        raise EncoderUnavailableError(f"ffprobe could not read {path}: {proc.stderr.strip()[-300:]}")
    return [line for line in proc.stdout.splitlines() if line.strip()]


def media_duration(video: Path) -> float:
    """Duration of ``video``'s first video stream, in seconds."""
    rows = _probe(video, "v:0", "duration")
    try:
        return float(rows[0].split(",")[0])
    except (IndexError, ValueError) as exc:
        raise EncoderUnavailableError(f"{video} has no video stream with a duration") from exc


def mux_audio(video: Path, wav: Path, *, offset_s: float, out: Path) -> None:
    """Write ``out``: ``video``'s picture, unchanged, with ``wav`` as an AAC track on the video's clock.

    ``offset_s`` is audio start minus video start (e.g. ``capture.started_at_wall -
    screen.started_at``). Positive: the audio is delayed by that much, silence first. Negative:
    that much of the audio's head is cut. The track is then padded with silence or cut to exactly
    the video's length, so the video is never shortened.
    """
    ffmpeg = _require("ffmpeg", "ffmpeg")
    duration = media_duration(video)
    shift = (
        f"adelay=delays={round(offset_s * 1000)}:all=1"
        if offset_s >= 0
        else f"atrim=start={-offset_s:.6f},asetpts=PTS-STARTPTS"
    )
    # apad+atrim to the probed length rather than -shortest: -shortest cuts at the first stream
    # to end, measured in muxer packets, which can drop the last video frames.
    graph = f"[1:a]{shift},apad=whole_dur={duration:.6f},atrim=end={duration:.6f}[a]"
    cmd = [
        ffmpeg, "-nostdin", "-loglevel", "error", "-y", "-i", str(video), "-i", str(wav),
        "-filter_complex", graph, "-map", "0:v:0", "-map", "[a]", "-c:v", "copy", "-c:a", "aac", "-b:a", "128k",
        "-movflags", "+faststart", str(out),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
    if proc.returncode != 0:
        raise EncoderUnavailableError(f"ffmpeg failed to mux the audio track: {proc.stderr.strip()[-500:]}")


class AudioLevel(NamedTuple):
    """Loudness of one window of a video's audio track."""

    time_s: float
    """Start of the window on the video's clock."""
    dbfs: float
    """RMS level in dB relative to full scale; :data:`SILENCE_DBFS` for digital silence."""


def audio_levels(video: Path, *, window_s: float = 0.1) -> list[AudioLevel]:
    """RMS level per ``window_s`` of ``video``'s first audio track; ``[]`` when it has none."""
    if window_s <= 0:
        raise ConfigError(f"window_s must be positive, got {window_s}")
    if not _probe(video, "a:0", "index"):
        return []
    ffmpeg = _require("ffmpeg", "ffmpeg")
    # first_pts=0 fills silence before a track that starts late, so index 0 is video time 0.
    cmd = [
        ffmpeg, "-nostdin", "-loglevel", "error", "-i", str(video), "-map", "0:a:0",
        "-af", "aresample=async=1:first_pts=0", "-ac", str(CHANNELS), "-ar", str(SAMPLE_RATE), "-f", "s16le", "-",
    ]
    proc = subprocess.run(cmd, capture_output=True, timeout=300, check=False)
    if proc.returncode != 0:
        raise EncoderUnavailableError(f"ffmpeg could not decode the audio of {video}: {proc.stderr.decode()[-300:]}")
    samples = np.frombuffer(proc.stdout, dtype="<i2").astype(np.float64) / 32768.0
    # RMS over both channels together: a downmix would cancel sound played out of phase.
    size = max(1, round(window_s * SAMPLE_RATE)) * CHANNELS
    levels = []
    for start in range(0, len(samples), size):
        window = samples[start:start + size]
        rms = float(np.sqrt(np.mean(window * window)))
        dbfs = max(SILENCE_DBFS, 20.0 * math.log10(rms)) if rms > 0 else SILENCE_DBFS
        levels.append(AudioLevel(time_s=start / CHANNELS / SAMPLE_RATE, dbfs=dbfs))
    return levels


def _end(proc: subprocess.Popen[bytes]) -> None:
    """Terminate ``proc`` (if it still runs) and reap it; killed when it takes over 5 s."""
    if proc.poll() is None:
        proc.terminate()
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
