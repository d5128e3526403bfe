// Reading evidence archives back with Debian's unzip: another implementation than the one that
// wrote them.
import { execFileSync } from "node:child_process";

/** Lists and unpacks `zip` with Debian's unzip, after its own integrity test (every CRC). */
export function unzip(zip: string, into: string): string[] {
  execFileSync("unzip", ["-tq", zip]);
  execFileSync("unzip", ["-q", zip, "-d", into]);
  return execFileSync("unzip", ["-Z1", zip], { encoding: "utf8" }).trim().split("\n");
}
