// Draws a Mermaid chart with Mermaid itself (the pinned npm package) in Debian's headless
// Chromium, driven by playwright-core, and writes the SVG it drew.
// Usage: node draw.mjs CHART.mmd OUT.svg   (CHROMIUM overrides /usr/bin/chromium)
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const [chartFile, outFile] = process.argv.slice(2);
if (!chartFile || !outFile) {
  console.error("usage: node draw.mjs CHART.mmd OUT.svg");
  process.exit(2);
}
const here = dirname(fileURLToPath(import.meta.url));
const profile = mkdtempSync(join(tmpdir(), "viewsync-mermaid-"));  // a new, empty user data dir
// The flags polyglot.md gives for this machine's closed network (no background connections).
const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  chromiumSandbox: false,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"],
});
try {
  const page = context.pages()[0] || await context.newPage();
  await page.setContent("<!doctype html><html><body><div id=\"chart\"></div></body></html>");
  await page.addScriptTag({ path: join(here, "node_modules", "mermaid", "dist", "mermaid.min.js") });
  const svg = await page.evaluate(async (text) => {
    window.mermaid.initialize({ startOnLoad: false, securityLevel: "strict" });
    const { svg } = await window.mermaid.render("drawn", text);  // throws on a chart it cannot parse
    const holder = document.getElementById("chart");
    holder.innerHTML = svg;
    return new XMLSerializer().serializeToString(holder.querySelector("svg"));
  }, readFileSync(chartFile, "utf8"));
  writeFileSync(outFile, svg);
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
