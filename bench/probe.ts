import { Deckhand } from "deckhand";
const base = ["--disable-background-networking", "--disable-component-update", "--no-first-run"];
const variants: Record<string, string[]> = {
  base: [],
  gpu: ["--disable-gpu"],
  ext: ["--disable-extensions", "--disable-component-extensions-with-background-pages", "--disable-default-apps"],
  misc: ["--disable-breakpad", "--disable-client-side-phishing-detection", "--disable-hang-monitor", "--disable-sync", "--metrics-recording-only", "--password-store=basic", "--use-mock-keychain"],
  nozygote: ["--no-zygote"],
  feat: ["--disable-features=Translate,OptimizationHints,MediaRouter,DialMediaRouteProvider,CalculateNativeWinOcclusion,InterestFeedContentSuggestions,CertificateTransparencyComponentUpdater,AutofillServerCommunication,PrivacySandboxSettings4"],
};
const res: Record<string, number[]> = {};
for (let round = 0; round < 6; round++) {
  for (const [name, extra] of Object.entries(variants)) {
    const dh = new Deckhand({ env: "LOCAL", verbose: 0, disablePino: true, localBrowserLaunchOptions: { args: [...base, ...extra] } });
    const t0 = performance.now();
    await dh.init();
    (res[name] ??= []).push(performance.now() - t0);
    await dh.close();
  }
}
const med = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1]!.toFixed(0);
for (const [k, v] of Object.entries(res)) console.log(k.padEnd(10), med(v), v.map((x) => x.toFixed(0)).join(" "));
