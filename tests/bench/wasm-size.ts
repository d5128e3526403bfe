// What the worker's wasm is made of: code bytes by crate, read from the function names of the
// unstripped build (`cargo build` keeps them; the bundle's copy is stripped). Rust's legacy
// mangling names a function by its path, `_ZN<len><segment>…E`; a trait impl's first segment is
// `<Type as Trait>`, counted under the type's crate — so the derived serde code of a protocol
// type counts as `mimo_protocol`.
import { readFileSync } from "node:fs";

/** The unsigned LEB128 at `at`: its value and the offset after it. */
function leb(bytes: Uint8Array, at: number): [number, number] {
  let value = 0;
  let shift = 0;
  for (;;) {
    const byte = bytes[at++]!;
    value += (byte & 0x7f) * 2 ** shift;
    shift += 7;
    if ((byte & 0x80) === 0) return [value, at];
  }
}

/** The crate a (mangled or plain) function name belongs to. */
function crateOf(name: string): string {
  const mangled = /^_ZN(\d+)(.*)$/.exec(name);
  const first = mangled ? mangled[2]!.slice(0, Number(mangled[1])) : name;
  return /^(?:_?\$LT\$)?([a-z_][a-z0-9_]*)(?:\.\.|$)/.exec(first)?.[1] ?? "(other)";
}

/** A legacy-mangled name as its path reads: `<Type as Trait>::method::{{closure}}`. */
function readable(name: string): string {
  const mangled = /^_ZN(.*)17h[0-9a-f]{16}E$/.exec(name);
  if (!mangled) return name;
  const segments: string[] = [];
  for (let rest = mangled[1]!; rest.length > 0; ) {
    const len = /^\d+/.exec(rest)?.[0];
    if (len === undefined) break;
    segments.push(rest.slice(len.length, len.length + Number(len)));
    rest = rest.slice(len.length + Number(len));
  }
  const escapes: Record<string, string> = { LT: "<", GT: ">", u20: " ", RF: "&", C: ",", u7b: "{", u7d: "}", BP: "*", u27: "'", u5b: "[", u5d: "]", u3b: ";" };
  return segments
    .join("::")
    .replace(/\$([A-Za-z0-9]+)\$/g, (whole, code: string) => escapes[code] ?? whole)
    .replace(/\.\./g, "::")
    .replace(/^_</, "<")
    .replace(/::_\{/g, "::{");
}

/**
 * Code bytes of each crate in the wasm at `file`, largest first, with the total code bytes and
 * the largest functions.
 */
export function codeByCrate(file: string): { total: number; crates: Array<[string, number]>; largest: Array<[string, number]> } {
  const bytes = new Uint8Array(readFileSync(file));
  const sizes: number[] = [];
  let imports = 0;
  const names = new Map<number, string>();
  let at = 8;
  while (at < bytes.length) {
    const id = bytes[at]!;
    const [size, start] = leb(bytes, at + 1);
    const end = start + size;
    if (id === 2) {
      // Imported functions come first in the function index space.
      let [count, p] = leb(bytes, start);
      const limits = (q: number) => {
        const flags = bytes[q]!;
        q = leb(bytes, q + 1)[1];
        return flags & 1 ? leb(bytes, q)[1] : q;
      };
      for (; count > 0; count--) {
        for (let field = 0; field < 2; field++) {
          const [len, after] = leb(bytes, p);
          p = after + len;
        }
        const kind = bytes[p++]!;
        if (kind === 0) {
          imports++;
          p = leb(bytes, p)[1];
        } else if (kind === 1) p = limits(p + 1);
        else if (kind === 2) p = limits(p);
        else if (kind === 3) p += 2;
        else p = leb(bytes, p + 1)[1];
      }
    } else if (id === 10) {
      let [count, p] = leb(bytes, start);
      for (; count > 0; count--) {
        const [len, body] = leb(bytes, p);
        sizes.push(len);
        p = body + len;
      }
    } else if (id === 0) {
      const [nameLen, p] = leb(bytes, start);
      if (new TextDecoder().decode(bytes.subarray(p, p + nameLen)) === "name") {
        let q = p + nameLen;
        while (q < end) {
          const sub = bytes[q]!;
          const [subSize, subStart] = leb(bytes, q + 1);
          if (sub === 1) {
            let [count, r] = leb(bytes, subStart);
            for (; count > 0; count--) {
              let index: number;
              let len: number;
              [index, r] = leb(bytes, r);
              [len, r] = leb(bytes, r);
              names.set(index, new TextDecoder().decode(bytes.subarray(r, r + len)));
              r += len;
            }
          }
          q = subStart + subSize;
        }
      }
    }
    at = end;
  }
  const crates = new Map<string, number>();
  sizes.forEach((size, i) => {
    const crate = crateOf(names.get(imports + i) ?? "");
    crates.set(crate, (crates.get(crate) ?? 0) + size);
  });
  const largest = sizes
    .map((size, i): [string, number] => [readable(names.get(imports + i) ?? `function ${imports + i}`), size])
    .sort((a, b) => b[1] - a[1])
    .slice(0, 10);
  return { total: sizes.reduce((a, b) => a + b, 0), crates: [...crates].sort((a, b) => b[1] - a[1]), largest };
}
