/**
 * Closing a connection whose request body was not read (too large, wrong type) without losing the
 * answer. Closing a socket while the client is still sending makes the kernel answer the unread
 * bytes with a reset, and a reset can discard the error answer before the client reads it: the
 * client sees "connection reset" instead of 413. So, like nginx's lingering close, the service
 * sends the answer, then half-closes (FIN: nothing more will come), keeps reading and discarding
 * what the client still sends, and closes fully when the client stops, or after `lingerMs` at most.
 * A client that keeps sending cannot hold the connection longer than that.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';

/** How long a connection lingers, at most, after an answer to a request whose body was not read. */
export const LINGER_MS = 3_000;

/**
 * Ends the connection after `reply` is sent, lingering while an unread request body arrives
 * (see the file comment). For a request whose body was read completely it just closes the
 * connection after the answer (`Connection: close`).
 */
export function closeAfterAnswer(req: FastifyRequest, reply: FastifyReply, lingerMs = LINGER_MS): void {
  if (req.raw.complete) {
    reply.header('connection', 'close');
    return;
  }
  // Not `Connection: close` (Fastify sets it on a body it refused): Node would close the socket as
  // soon as the answer is written, while the body still arrives. The socket is ended below instead.
  reply.removeHeader('connection');
  const socket = req.raw.socket;
  reply.raw.once('finish', () => {
    // Discard the rest of the body: the request stream is not consumed by anyone now.
    req.raw.resume();
    socket.end();
    const timer = setTimeout(() => socket.destroy(), lingerMs);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  });
}
