import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ALL_KINDS, findPii, hasPii, luhn, mapStrings, redactPii, redactSecrets } from "../src/redact.ts";
import { placeholderNames, secretAllowedAt } from "../src/secret-values.ts";
import { isSensitiveField } from "../src/secrets.ts";

const kindsIn = (text: string) => findPii(text, ALL_KINDS).map((f) => `${f.kind}:${text.slice(f.start, f.end)}`);

describe("the personal data filter", () => {
  it("finds e-mail addresses", () => {
    assert.deepEqual(kindsIn("Write to jane.doe+shop@mail.example.co.uk today."), ["email:jane.doe+shop@mail.example.co.uk"]);
    assert.equal(redactPii("Contact: a.b@c.io", ["email"]), "Contact: [email redacted]");
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

describe("secrets by placeholder", () => {
  it("replaces a value in any form it may take with its placeholder", () => {
    const secrets = new Map([["pw", `p"a<s>s&w'd`]]);
    assert.equal(redactSecrets(`raw p"a<s>s&w'd`, secrets), "raw {{secret:pw}}");
    assert.equal(redactSecrets(JSON.stringify({ v: `p"a<s>s&w'd` }), secrets), '{"v":"{{secret:pw}}"}');
    assert.equal(redactSecrets("html p&quot;a&lt;s&gt;s&amp;w'd", secrets), "html {{secret:pw}}");
    assert.equal(redactSecrets("nothing here", secrets), "nothing here");
  });
  it("finds the placeholders of a text", () => {
    assert.deepEqual(placeholderNames("{{secret:pw}}x{{secret:api.key}}{{secret:pw}}{{secret:bad name}}"), ["pw", "api.key"]);
  });
  it("binds a secret to its domains the way the server does", () => {
    const d = ["example.com", "*.example.org", "127.0.0.1:8080"];
    assert.ok(secretAllowedAt(d, "https://example.com/login"));
    assert.ok(!secretAllowedAt(d, "https://www.example.com/"));
    assert.ok(secretAllowedAt(d, "https://a.example.org/"));
    assert.ok(secretAllowedAt(d, "https://example.org/"));
    assert.ok(!secretAllowedAt(d, "https://evilexample.org/"));
    assert.ok(secretAllowedAt(d, "http://127.0.0.1:8080/x"));
    assert.ok(!secretAllowedAt(d, "http://127.0.0.1:8081/x"));
    assert.ok(!secretAllowedAt(d, "https://example.com@evil.test/"));
    assert.ok(!secretAllowedAt(d, "file:///example.com"));
  });
  it("treats a field a secret was typed into as sensitive", () => {
    const field = (attrs: Record<string, string>) => ({ tagName: "INPUT", getAttribute: (n: string) => attrs[n] ?? null });
    assert.ok(!isSensitiveField(field({ type: "text" })));
    assert.ok(isSensitiveField(field({ type: "text", "data-mimo-secret": "" })));
  });
});

describe("what leaves the extension", () => {
  it("carries no secret value learned, and personal data only as the task's policy allows", async () => {
    const { forServer, evidenceText } = await import("../src/evidence.ts");
    const { secretVault } = await import("../src/secret-values.ts");
    await secretVault.remember("task-1", "pw", "s3cret-Value!");
    const success = {
      result: { text: "typed s3cret-Value! for jane@example.com", url: "https://x.test/?u=jane@example.com", artifactId: "a1" },
      warnings: ["the field holds \"s3cret-Value!\""],
    };
    const off = forServer(success, { evidence: true, model: false, kinds: [...ALL_KINDS] });
    assert.deepEqual(off.result, { text: "typed {{secret:pw}} for jane@example.com", url: "https://x.test/?u=jane@example.com", artifactId: "a1" });
    assert.deepEqual(off.warnings, ['the field holds "{{secret:pw}}"']);
    const on = forServer(success, { evidence: true, model: true, kinds: ["email"] });
    assert.equal((on.result as { text: string }).text, "typed {{secret:pw}} for [email redacted]");
    assert.equal((on.result as { url: string }).url, "https://x.test/?u=jane@example.com", "addresses are not page content");
    assert.equal(evidenceText("<p>jane@example.com s3cret-Value!</p>", { evidence: true, model: false, kinds: ["email"] }), "<p>[email redacted] {{secret:pw}}</p>");
    assert.equal(evidenceText("<p>jane@example.com</p>", { evidence: false, model: false, kinds: ["email"] }), "<p>jane@example.com</p>");
    const frame = JSON.stringify({ type: "action_result", outcome: { result: { v: 's3cret-Value!' } } });
    assert.equal(secretVault.redactFrame(frame), JSON.stringify({ type: "action_result", outcome: { result: { v: "{{secret:pw}}" } } }));
  });
});
