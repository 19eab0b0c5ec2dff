/**
 * Live updates (docs/decisions/0014-practice-workspace.md, "Live calendar"): reads
 * `GET /practice/v1/events` (text/event-stream, the HTML Living Standard's server-sent events format)
 * with fetch, so the token stays in the Authorization header and never in a URL, and reconnects with
 * `Last-Event-ID` after a drop, waiting longer after each failure.
 */
import type { Api } from './api.js';

export interface LiveEvent {
  id: string;
  type: string;
  data: unknown;
}

export interface Live {
  stop(): void;
}

/** Splits a stream of server-sent event text into events; returns the unparsed rest. */
export function parseEvents(buffer: string, emit: (e: { id?: string; type: string; data: string; retry?: number }) => void): string {
  const blocks = buffer.split(/\r\n\r\n|\n\n|\r\r/);
  const rest = blocks.pop() ?? '';
  for (const block of blocks) {
    let id: string | undefined;
    let type = 'message';
    let retry: number | undefined;
    const data: string[] = [];
    for (const line of block.split(/\r\n|\n|\r/)) {
      if (!line || line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'id') id = value;
      else if (field === 'event') type = value;
      else if (field === 'data') data.push(value);
      else if (field === 'retry' && /^\d+$/.test(value)) retry = Number(value);
    }
    if (data.length || id !== undefined) emit({ ...(id !== undefined ? { id } : {}), type, data: data.join('\n'), ...(retry !== undefined ? { retry } : {}) });
  }
  return rest;
}

/** Follows the practice's event stream until stopped; `onEvent` runs for every event, `onState` on (dis)connects. */
export function follow(api: Api, onEvent: (e: LiveEvent) => void, onState: (connected: boolean) => void): Live {
  let lastId: string | undefined;
  let stopped = false;
  let controller: AbortController | undefined;
  let delay = 1000;
  let failures = 0;

  async function connect(): Promise<void> {
    controller = new AbortController();
    const res = await api.fetch('/practice/v1/events', {
      headers: { accept: 'text/event-stream', ...(lastId ? { 'last-event-id': lastId } : {}) },
      signal: controller.signal,
      cache: 'no-store',
    });
    if (!res.ok || !res.body) throw new Error(`event stream answered ${res.status}`);
    onState(true);
    failures = 0;
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer = parseEvents(buffer + value, (e) => {
        if (e.id !== undefined) lastId = e.id;
        if (e.retry !== undefined) delay = e.retry;
        if (e.type === 'message' && !e.data) return;
        let data: unknown = e.data;
        try {
          data = JSON.parse(e.data);
        } catch {
          // not JSON: pass the text on
        }
        onEvent({ id: e.id ?? '', type: e.type, data });
      });
    }
  }

  void (async () => {
    while (!stopped) {
      try {
        await connect();
      } catch {
        failures++;
      }
      if (stopped) break;
      onState(false);
      await new Promise((r) => setTimeout(r, Math.min(30_000, delay * 2 ** Math.min(failures, 5))));
    }
  })();

  return {
    stop() {
      stopped = true;
      controller?.abort();
    },
  };
}
