/** Calls a running service's admin API for the CLI's `--url` mode; errors carry the error body's messages. */
export async function adminCall(
  opts: { url?: string; adminToken?: string },
  method: string,
  path: string,
  body?: unknown,
): Promise<unknown> {
  if (!opts.adminToken) throw new Error('--admin-token (or ADMIN_TOKEN) is required with --url');
  const res = await fetch(`${opts.url!.replace(/\/+$/, '')}/admin/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${opts.adminToken}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  const json = text ? (JSON.parse(text) as unknown) : undefined;
  if (!res.ok) {
    const errors = (json as { errors?: { field?: string; message: string }[] } | undefined)?.errors ?? [];
    const detail = errors.map((e) => (e.field ? `${e.field}: ${e.message}` : e.message)).join('; ');
    throw new Error(`${method} ${path} answered ${res.status}${detail ? `: ${detail}` : ''}`);
  }
  return json;
}
