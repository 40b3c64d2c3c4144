# A real HTTP/3 client over QUIC (aioquic, pinned by test/setup/aioquic.mjs) that the protocol tests
# drive line by line: it connects, then on stdin takes `get <path>` (one request on a new stream)
# and `close`; on stdout it writes one JSON event a line: connected, response (status, headers),
# body_end, goaway (an HTTP/3 GOAWAY frame on the server's control stream), stream_reset, closed
# (the QUIC connection ended: its error code and reason). It exits once the connection is closed.
#
#   python h3_client.py HOST PORT SERVER_NAME
import asyncio
import json
import ssl
import sys

from aioquic.asyncio.client import connect
from aioquic.asyncio.protocol import QuicConnectionProtocol
from aioquic.h3.connection import H3_ALPN, FrameType, H3Connection
from aioquic.h3.events import DataReceived, HeadersReceived
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.events import ConnectionTerminated, StreamReset


def emit(event, **fields):
    sys.stdout.write(json.dumps({"event": event, **fields}) + "\n")
    sys.stdout.flush()


class SeeingH3Connection(H3Connection):
    """aioquic reads a GOAWAY's header and drops the frame: this reports that it came."""

    def _check_control_frame_type(self, frame_type):
        super()._check_control_frame_type(frame_type)
        if frame_type == FrameType.GOAWAY:
            emit("goaway")


class Client(QuicConnectionProtocol):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.http = SeeingH3Connection(self._quic)
        self.closed = asyncio.Event()

    def get(self, path):
        stream_id = self._quic.get_next_available_stream_id()
        authority = self._quic.configuration.server_name
        headers = [(b":method", b"GET"), (b":scheme", b"https"), (b":authority", authority.encode()), (b":path", path.encode())]
        self.http.send_headers(stream_id, headers, end_stream=True)
        self.transmit()
        emit("sent", stream=stream_id, path=path)

    def quic_event_received(self, event):
        if isinstance(event, ConnectionTerminated):
            emit("closed", error_code=event.error_code, reason=event.reason_phrase)
            self.closed.set()
        elif isinstance(event, StreamReset):
            emit("stream_reset", stream=event.stream_id, error_code=event.error_code)
        for h3 in self.http.handle_event(event):
            if isinstance(h3, HeadersReceived):
                headers = {name.decode(): value.decode() for name, value in h3.headers}
                emit("response", stream=h3.stream_id, status=int(headers.get(":status", "0")), headers=headers)
                if h3.stream_ended:
                    emit("body_end", stream=h3.stream_id)
            elif isinstance(h3, DataReceived) and h3.stream_ended:
                emit("body_end", stream=h3.stream_id)


async def commands(client):
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while not client.closed.is_set():
        line = (await reader.readline()).decode().strip()
        if line == "" or line == "close":
            client.close()
            return
        if line.startswith("get "):
            client.get(line[4:])


async def main(host, port, server_name):
    # The certificate is the test's own self-signed one: the point here is the protocol, not trust.
    configuration = QuicConfiguration(is_client=True, alpn_protocols=H3_ALPN, server_name=server_name, verify_mode=ssl.CERT_NONE, idle_timeout=120.0)
    async with connect(host, port, configuration=configuration, create_protocol=Client) as client:
        emit("connected")
        reading = asyncio.ensure_future(commands(client))
        await client.closed.wait()
        reading.cancel()


if __name__ == "__main__":
    try:
        asyncio.run(asyncio.wait_for(main(sys.argv[1], int(sys.argv[2]), sys.argv[3]), timeout=120))
    except (asyncio.TimeoutError, ConnectionError) as error:
        emit("error", message=repr(error))
        sys.exit(1)
