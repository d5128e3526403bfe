// How the tests start Debian's Chromium (never a downloaded browser): flags that keep it off
// the network this machine does not have, and optionally the Mimo extension loaded unpacked.
export const CHROMIUM = "/usr/bin/chromium";

export function chromiumArgs(extensionDir?: string): string[] {
  const extension = extensionDir
    ? [`--disable-extensions-except=${extensionDir}`, `--load-extension=${extensionDir}`, "--silent-debugger-extension-api"]
    : [];
  return [
    ...extension,
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    // Names under .localhost resolve to this machine (Chromium's own rule), so tests can serve
    // distinct sites (shop.localhost, evil.localhost) from the local fixture servers.
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1 , EXCLUDE *.localhost",
  ];
}
