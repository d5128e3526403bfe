// How this browser introduces itself: read from `navigator` in the service worker (for `hello`)
// and on the options page (for the default name).
import type { BrowserInfo } from "../../protocol/ts/protocol.ts";
import { browserInfo, platformName } from "./config.ts";
import type { UserAgentData } from "./config.ts";

export async function describeBrowser(): Promise<{ browser: BrowserInfo; platform: string }> {
  const uaData = (navigator as Navigator & { userAgentData?: UserAgentData }).userAgentData;
  let brands = uaData?.brands;
  try {
    brands = (await uaData?.getHighEntropyValues(["fullVersionList"]))?.fullVersionList ?? brands;
  } catch {
    // Without the full versions the major versions of `brands` do.
  }
  return { browser: browserInfo(brands, navigator.userAgent), platform: platformName(uaData, navigator.userAgent) };
}
