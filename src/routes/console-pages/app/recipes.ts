/**
 * How a receiver checks `webhook-signature` (docs/webhooks.md, the verification recipes; docs/console.md,
 * "Webhooks"): the same check in Node.js, Python and Go as plain text, with a tab switch (arrow keys,
 * Home and End move between the languages, as in the WAI-ARIA tabs pattern).
 */
import { $, all } from './dom.js';

/** The recipes, copied from docs/webhooks.md (the browser test compares each with the document). */
export const RECIPES: Record<string, { label: string; code: string }> = {
  node: { label: 'Node.js', code: `import { createHmac, timingSafeEqual } from 'node:crypto';

export function verifyCarebookWebhook(rawBody, headers, keyBase64, toleranceSeconds = 300) {
  const timestamp = headers['webhook-timestamp'];
  const header = headers['webhook-signature'] ?? '';
  if (!/^\\d+$/.test(timestamp ?? '')) return false;
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > toleranceSeconds) return false;
  const expected = createHmac('sha256', Buffer.from(keyBase64, 'base64')).update(\`\${timestamp}.\${rawBody}\`).digest();
  return header.split(';').some((sig) => {
    if (!sig.startsWith('v1:')) return false;
    const got = Buffer.from(sig.slice(3), 'base64');
    return got.length === expected.length && timingSafeEqual(got, expected);
  });
}` },
  python: { label: 'Python', code: `import base64, binascii, hashlib, hmac, re, time

def verify_carebook_webhook(raw_body: bytes, headers, key_base64: str, tolerance_seconds: int = 300) -> bool:
    timestamp = headers.get("webhook-timestamp") or ""
    header = headers.get("webhook-signature") or ""
    if not re.fullmatch(r"[0-9]+", timestamp):
        return False
    if abs(time.time() - int(timestamp)) > tolerance_seconds:
        return False
    signed = timestamp.encode() + b"." + raw_body
    expected = hmac.new(base64.b64decode(key_base64), signed, hashlib.sha256).digest()
    for sig in header.split(";"):
        if not sig.startswith("v1:"):
            continue
        try:
            got = base64.b64decode(sig[3:], validate=True)
        except (binascii.Error, ValueError):
            continue
        if hmac.compare_digest(got, expected):
            return True
    return False` },
  go: { label: 'Go', code: `package carebook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

var digits = regexp.MustCompile(\`^[0-9]+$\`)

// VerifyWebhook reports whether rawBody (the bytes received, before parsing) carries a valid
// signature under keyBase64, with a timestamp within tolerance of now.
func VerifyWebhook(rawBody []byte, h http.Header, keyBase64 string, tolerance time.Duration) bool {
	ts := h.Get("webhook-timestamp")
	if !digits.MatchString(ts) {
		return false
	}
	secs, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return false
	}
	if d := time.Since(time.Unix(secs, 0)); d > tolerance || d < -tolerance {
		return false
	}
	key, err := base64.StdEncoding.DecodeString(keyBase64)
	if err != nil {
		return false
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(ts + "."))
	mac.Write(rawBody)
	expected := mac.Sum(nil)
	for _, sig := range strings.Split(h.Get("webhook-signature"), ";") {
		if !strings.HasPrefix(sig, "v1:") {
			continue
		}
		if got, err := base64.StdEncoding.DecodeString(sig[3:]); err == nil && hmac.Equal(got, expected) {
			return true
		}
	}
	return false
}` },
};

/** Shows one language's recipe and marks its tab. */
function show(lang: string, focus: boolean): void {
  const panel = $('recipe-code');
  for (const tab of all<HTMLButtonElement>('#recipe-tabs [role="tab"]')) {
    const on = tab.dataset.lang === lang;
    tab.setAttribute('aria-selected', String(on));
    tab.tabIndex = on ? 0 : -1;
    if (on && focus) tab.focus();
    if (on) panel.setAttribute('aria-labelledby', tab.id);
  }
  panel.dataset.lang = lang;
  panel.querySelector('code')!.textContent = RECIPES[lang]!.code;
}

/** Wires the recipe tabs (docs/console.md, "Webhooks"); Node.js first. */
export function setupRecipes(): void {
  const tabs = all<HTMLButtonElement>('#recipe-tabs [role="tab"]');
  const langs = tabs.map((t) => t.dataset.lang!);
  for (const tab of tabs) {
    tab.addEventListener('click', () => show(tab.dataset.lang!, false));
    tab.addEventListener('keydown', (ev) => {
      const i = langs.indexOf(tab.dataset.lang!);
      const keys: Record<string, number> = { ArrowRight: (i + 1) % langs.length, ArrowLeft: (i + langs.length - 1) % langs.length, Home: 0, End: langs.length - 1 };
      const to = keys[ev.key];
      if (to === undefined) return;
      ev.preventDefault();
      show(langs[to]!, true);
    });
  }
  show('node', false);
}
