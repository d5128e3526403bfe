import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { readFileSync } from "node:fs";
import { ALL_KINDS, EMAIL, findPii, hasPii, keyRuns, luhn, mapStrings, redactPii, redactSecrets, SecretMatcher } from "../src/redact.ts";
import { placeholderNames, secretAllowedAt } from "../src/secret-values.ts";
import { isSensitiveField } from "../src/secrets.ts";

const kindsIn = (text: string) => findPii(text, ALL_KINDS).map((f) => `${f.kind}:${text.slice(f.start, f.end)}`);

describe("the personal data filter", () => {
  it("finds e-mail addresses", () => {
    assert.deepEqual(kindsIn("Write to jane.doe+shop@mail.example.co.uk today."), ["email:jane.doe+shop@mail.example.co.uk"]);
    assert.equal(redactPii("Contact: a.b@c.io", ["email"]), "Contact: [email redacted]");
  });
  it("finds the addresses the pattern finds scanning every character, trying it only around each @", () => {
    // A seeded generator of texts dense in what the pattern reads: `@`, dots, dashes, letters.
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const alphabet = "ab.-_+@ @Z9.c";
    for (let n = 0; n < 3000; n++) {
      let text = "";
      for (let i = 0, len = Math.floor(next() * 120); i < len; i++) text += alphabet[Math.floor(next() * alphabet.length)];
      if (n % 50 === 0) text = `${"a".repeat(70)}@${"b".repeat(70)}.com ${text}`;
      const scanned = [...text.matchAll(EMAIL)].map((m) => `${m.index}:${m[0]}`);
      assert.deepEqual(findPii(text, ["email"]).map((f) => `${f.start}:${text.slice(f.start, f.end)}`), scanned, JSON.stringify(text));
    }
  });
  it("finds phone numbers in common formats", () => {
    for (const phone of ["+1 (555) 123-4567", "555-123-4567", "(555) 123 4567", "+44 20 7946 0958", "020 7946 0958", "+4915112345678", "+33 1 23 45 67 89", "555.123.4567"]) {
      assert.deepEqual(kindsIn(`Call ${phone} now`), [`phone:${phone}`], phone);
    }
  });
  it("finds card numbers that pass the Luhn check, with or without separators", () => {
    assert.ok(luhn("4111111111111111"));
    assert.ok(!luhn("4111111111111112"));
    for (const card of ["4111 1111 1111 1111", "4111-1111-1111-1111", "5500005555555559", "378282246310005"]) {
      assert.deepEqual(kindsIn(`Card: ${card}.`), [`card:${card}`], card);
    }
  });
  it("finds tokens and keys by their shapes", () => {
    for (const token of ["sk-proj-abcdefghijklmnop1234", "ghp_abcdefghijklmnopqrstuvwxyz0123456789", "AKIAIOSFODNN7EXAMPLE", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "xoxb-123456789012-abcdefghij", "Zx8pQ2mN7vB4kL9wR3tY6uI1oP5aS0dF"]) {
      assert.deepEqual(findPii(`key ${token} end`, ["token"]).length, 1, token);
      assert.equal(redactPii(`key ${token} end`, ["token"]), "key [token redacted] end");
    }
    assert.equal(redactPii("Authorization: Bearer abcdef0123456789abcdef", ["token"]), "Authorization: [token redacted]");
  });
  it("finds the runs of key characters the regular expression finds, wherever they stand", () => {
    const re = /(?<![A-Za-z0-9_-])[A-Za-z0-9_-]{32,}(?![A-Za-z0-9_-])/g;
    const key = (n: number) => "aB3_-".repeat(20).slice(0, n);
    const texts = [
      "", key(31), key(32), key(33), ` ${key(32)}`, `${key(32)} `, `${key(31)} ${key(31)}`, `${key(40)}é${key(32)}`,
      `${key(32)}.${key(32)}`, `x${" ".repeat(31)}${key(32)}`, `${"ab ".repeat(50)}${key(64)}`, `😀${key(33)}😀`, key(31) + "\n" + key(95),
    ];
    for (let shift = 0; shift < 40; shift++) texts.push(`${" ".repeat(shift)}${key(32 + (shift % 5))}${"?".repeat(shift % 3)}${key(31)}`);
    for (const text of texts) {
      assert.deepEqual(keyRuns(text), Array.from(text.matchAll(re), (m) => ({ start: m.index, end: m.index + m[0].length, text: m[0] })), JSON.stringify(text));
    }
  });

  it("leaves order numbers, dates, times, prices, versions and ordinary words alone", () => {
    for (const text of [
      "Order #4111111111111112 shipped",
      "Order 2024-000123 placed on 2024-01-15 10:30",
      "Delivered 15.01.2024, invoice 12/03/2025",
      "Total 1 234,56 € for 3 items",
      "Version 1.2.3.4 released; build 20240115",
      "Tracking 1Z999AA10123456784",
      "Page 12 of 345",
      "Server 192.168.100.200 is up",
      "ISBN 978-3-16-148410-0",
      "Call us between 9-17",
      "lowercase-hash-d41d8cd98f00b204e9800998ecf8427e",
      "an ordinary sentence with no data at all",
    ]) {
      assert.deepEqual(kindsIn(text), [], text);
      assert.equal(redactPii(text, ALL_KINDS), text);
    }
  });
  it("filters only the kinds asked for", () => {
    const text = "jane@example.com, +1 555 123 4567, 4111 1111 1111 1111";
    assert.equal(redactPii(text, ["email"]), "[email redacted], +1 555 123 4567, 4111 1111 1111 1111");
    assert.equal(redactPii(text, ALL_KINDS), "[email redacted], [phone redacted], [card redacted]");
    assert.equal(redactPii(text, []), text);
    assert.ok(hasPii(text, ["card"]));
    assert.ok(!hasPii("nothing", ALL_KINDS));
  });
  it("maps every string of a result, leaving named keys alone", () => {
    const out = mapStrings({ text: "a@b.io", url: "https://x.test/?mail=a@b.io", list: [{ value: "a@b.io" }], n: 3 }, (s) => redactPii(s, ["email"]), new Set(["url"]));
    assert.deepEqual(out, { text: "[email redacted]", url: "https://x.test/?mail=a@b.io", list: [{ value: "[email redacted]" }], n: 3 });
  });
});

/** A password with characters every encoding escapes: `@`, a space, `&`, `"`, `<`, `+`, `/`, `%`, `\`, a non-ASCII letter and an emoji. */
const PW = `p@ss w&r"d<+/%\\é😀`;
const secrets = new Map([["pw", PW]]);
const utf8Base64 = (s: string) => Buffer.from(s, "utf8").toString("base64");

describe("secrets by placeholder", () => {
  it("replaces a value raw, JSON-escaped and HTML-escaped with its placeholder", () => {
    for (const form of [
      PW,
      JSON.stringify(PW).slice(1, -1),
      // Every character as `\uXXXX`, as ASCII-only JSON writers do (an emoji as its surrogate pair).
      Array.from(PW, (c) => Array.from({ length: c.length }, (_, i) => `\\u${c.charCodeAt(i).toString(16).padStart(4, "0")}`).join("")).join(""),
      `p@ss w&amp;r&quot;d&lt;+/%\\é😀`,
      `p&#64;ss&#32;w&#x26;r&#X22;d&#060;&#43;&#x2F;&#37;&#92;&#233;&#128512;`,
      `p@ss w&amp;r&#34;d&lt;+&#x2f;%\\&#xE9;😀`,
    ]) {
      assert.equal(redactSecrets(`before ${form} after`, secrets), "before {{secret:pw}} after", form);
      assert.equal(redactSecrets(`"${form}"`, secrets), '"{{secret:pw}}"', form);
    }
  });
  it("replaces a value percent-encoded in a URL or a form, in either case of hex, with + for a space, and escaped twice", () => {
    const upper = encodeURIComponent(PW);
    const forms = [
      upper,
      upper.toLowerCase(),
      new URLSearchParams({ q: PW }).toString().slice(2),
      // What a browser's URL parser leaves of it in a query: only some characters escaped.
      new URL(`https://example.com/?q=${PW}`).search.slice(3),
      // A URL inside a URL's query (a login page's `next=`).
      encodeURIComponent(`https://example.com/?q=${upper}`).replace(/^.*%3Fq%3D/, ""),
    ];
    assert.equal(new Set(forms).size, forms.length, "each form differs");
    for (const form of forms) {
      assert.notEqual(form, PW);
      assert.equal(redactSecrets(`https://example.com/search?q=${form}&page=2`, secrets), "https://example.com/search?q={{secret:pw}}&page=2", form);
    }
  });
  it("replaces the base64 and base64url of the exact value, padded or not, and leaves base64 that merely contains it", () => {
    const value = "s3cr3t?>?";
    const b64 = utf8Base64(value);
    assert.match(b64, /[+/]/, "the value's base64 has characters base64url changes");
    const url = b64.replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
    const one = new Map([["k", value]]);
    for (const form of [b64, b64.replace(/=+$/, ""), url, encodeURIComponent(b64)]) {
      assert.equal(redactSecrets(`token=${form}; next`, one), "token={{secret:k}}; next", form);
    }
    const padded = utf8Base64("pw-Zq9~x-longer");
    assert.equal(redactSecrets(`auth ${padded}`, new Map([["k", "pw-Zq9~x-longer"]])), "auth {{secret:k}}");
    // The base64 of a longer text is another string: not a spelling of the value.
    const longer = utf8Base64(`user:${value}`);
    assert.equal(redactSecrets(longer, one), longer);
  });
  it("finds where each value stands, the longest whole, and leaves other text alone", () => {
    const matcher = new SecretMatcher([["short", "hunter2"], ["long", "hunter2-and-more"]]);
    const text = "a hunter2-and-more b hunter%32 c hunter3";
    assert.deepEqual(
      matcher.find(text).map((f) => [f.name, text.slice(f.start, f.end)]),
      [["long", "hunter2-and-more"], ["short", "hunter%32"]],
    );
    assert.equal(matcher.redact(text), "a {{secret:long}} b {{secret:short}} c hunter3");
    assert.equal(redactSecrets("nothing here, p%40sx, p&#64;s", secrets), "nothing here, p%40sx, p&#64;s");
    assert.equal(new SecretMatcher([]).redact("p@ss"), "p@ss");
  });
  it("finds a value whose raw text looks like an escape of itself", () => {
    const tricky = new Map([["t", "a%25b&amp;c\\u0041"]]);
    assert.equal(redactSecrets("x a%25b&amp;c\\u0041 y", tricky), "x {{secret:t}} y");
    assert.equal(redactSecrets(`x ${encodeURIComponent("a%25b&amp;c\\u0041")} y`, tricky), "x {{secret:t}} y");
  });
  it("stays linear on text written to make a matcher backtrack", () => {
    // Each `\` of the value is `\` or, JSON-escaped, `\\`: a matcher free to take either would
    // try every split of the page's backslashes before failing (about 1.3^n ways).
    for (const c of ["\\", "%", "&"]) {
      const matcher = new SecretMatcher([["v", c.repeat(40)]]);
      const text = `${c.repeat(39)}X${"y".repeat(100)}`;
      const started = performance.now();
      assert.deepEqual(matcher.find(text), []);
      assert.ok(performance.now() - started < 500, `${c}: ${performance.now() - started} ms`);
    }
  });
  it("finds the placeholders of a text", () => {
    assert.deepEqual(placeholderNames("{{secret:pw}}x{{secret:api.key}}{{secret:pw}}{{secret:bad name}}"), ["pw", "api.key"]);
  });
  it("binds a secret to its domains the way the server does, by the table both are tested with", () => {
    type Table = { cases: Array<{ domains: string[]; allowed: string[]; refused: string[] }>; valid: Array<{ rule: string; allows: string }>; invalid: string[] };
    const table = JSON.parse(readFileSync(new URL("../../protocol/tests/fixtures/secret-domains.json", import.meta.url), "utf8")) as Table;
    const urls = table.cases.flatMap((c) => [...c.allowed, ...c.refused]);
    for (const c of table.cases) {
      for (const url of c.allowed) assert.ok(secretAllowedAt(c.domains, url), `${JSON.stringify(c.domains)} should allow ${url}`);
      for (const url of c.refused) assert.ok(!secretAllowedAt(c.domains, url), `${JSON.stringify(c.domains)} should refuse ${url}`);
    }
    // A rule the server would not store allows nothing.
    for (const rule of table.invalid) for (const url of urls) assert.ok(!secretAllowedAt([rule], url), `${rule} allows ${url}`);
    for (const { rule, allows } of table.valid) assert.ok(secretAllowedAt([rule], allows), `${rule} should allow ${allows}`);
  });
  it("treats a field a secret was typed into as sensitive", () => {
    const field = (attrs: Record<string, string>) => ({ tagName: "INPUT", getAttribute: (n: string) => attrs[n] ?? null });
    assert.ok(!isSensitiveField(field({ type: "text" })));
    assert.ok(isSensitiveField(field({ type: "text", "data-mimo-secret": "" })));
  });
  it("treats a payment card's number and code fields as sensitive by their name or id, and nothing else", () => {
    const field = (attrs: Record<string, string>) => ({ tagName: "INPUT", getAttribute: (n: string) => attrs[n] ?? null });
    for (const attrs of [{ name: "cardnumber" }, { name: "card_number" }, { id: "cc-num" }, { name: "ccNumber" }, { name: "cvv" }, { id: "card-cvc" }, { name: "security_code" }, { name: "payment[card][no]" }] as Array<Record<string, string>>) {
      assert.ok(isSensitiveField(field({ type: "text", ...attrs })), JSON.stringify(attrs));
    }
    for (const attrs of [{ name: "email" }, { name: "discount_code" }, { name: "postcode" }, { id: "cardholder" }, { name: "accounting" }, { name: "success" }] as Array<Record<string, string>>) {
      assert.ok(!isSensitiveField(field({ type: "text", ...attrs })), JSON.stringify(attrs));
    }
  });
});

describe("what leaves the extension", () => {
  it("carries no secret value learned, and personal data only as the task's policy allows", async () => {
    const { forServer, evidenceText } = await import("../src/evidence.ts");
    const { secretVault } = await import("../src/secret-values.ts");
    await secretVault.remember("task-1", "pw", "s3cret-Value!");
    const success: { result: unknown; modelResult?: unknown; warnings: string[] } = {
      result: { text: "typed s3cret-Value! for jane@example.com", url: "https://x.test/?u=jane@example.com", artifactId: "a1" },
      warnings: ["the field holds \"s3cret-Value!\""],
    };
    // Evidence filtered, the model's text not: what is kept is filtered, the model's view rides beside it.
    const off = forServer(success, { evidence: true, model: false, kinds: [...ALL_KINDS] });
    assert.deepEqual(off.result, { text: "typed {{secret:pw}} for [email redacted]", url: "https://x.test/?u=jane@example.com", artifactId: "a1" });
    assert.deepEqual(off.modelResult, { text: "typed {{secret:pw}} for jane@example.com", url: "https://x.test/?u=jane@example.com", artifactId: "a1" });
    assert.deepEqual(off.warnings, ['the field holds "{{secret:pw}}"']);
    // Both filtered: one view, no second copy.
    const on = forServer(success, { evidence: true, model: true, kinds: ["email"] });
    assert.equal((on.result as { text: string }).text, "typed {{secret:pw}} for [email redacted]");
    assert.equal(on.modelResult, undefined);
    assert.equal((on.result as { url: string }).url, "https://x.test/?u=jane@example.com", "addresses are not page content");
    // Too large for both views in one frame: the filtered one only, which the model reads too.
    const { MAX_RESULT_BYTES } = await import("../src/results.ts");
    const big = forServer({ result: { text: `jane@example.com ${"x".repeat(MAX_RESULT_BYTES / 2)}` } }, { evidence: true, model: false, kinds: ["email"] });
    assert.match((big.result as { text: string }).text, /^\[email redacted\] x/);
    assert.equal((big as { modelResult?: unknown }).modelResult, undefined);
    // Nothing filtered: kept as read.
    const none = forServer(success, { evidence: false, model: false, kinds: [...ALL_KINDS] });
    assert.equal((none.result as { text: string }).text, "typed {{secret:pw}} for jane@example.com");
    assert.equal(none.modelResult, undefined);
    assert.equal(evidenceText("<p>jane@example.com s3cret-Value!</p>", { evidence: true, model: false, kinds: ["email"] }), "<p>[email redacted] {{secret:pw}}</p>");
    assert.equal(evidenceText("<p>jane@example.com</p>", { evidence: false, model: false, kinds: ["email"] }), "<p>jane@example.com</p>");
    const frame = JSON.stringify({ type: "action_result", outcome: { result: { v: 's3cret-Value!' } } });
    assert.equal(secretVault.redactFrame(frame), JSON.stringify({ type: "action_result", outcome: { result: { v: "{{secret:pw}}" } } }));
  });
});
