// The fixture pages of the export tests, served by the test's fixture server. Every page tells the
// server what happened to it (a beacon: a synchronous request to /beacon, so it has arrived by the
// time the event that sent it is handled): which element got which input. A recorded run and the
// exported script that replays it must leave the same beacons.

import type { FixtureServer } from "./fixture-server.ts";
import type { FixtureRequest } from "./fixture-site.ts";

/** Sends `what=value` to the server before the event handler returns. */
const BEACON = `<script>
function beacon(what, value) {
  const xhr = new XMLHttpRequest();
  xhr.open("GET", "/beacon?" + new URLSearchParams({ what, value: String(value) }), false);
  xhr.send();
}
</script>`;

function page(title: string, body: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title>${BEACON}</head><body>${body}</body></html>`;
}

export const EXPORT_PAGES: Record<string, (site: FixtureServer) => string> = {
  "/x/form.html": () =>
    page(
      "Order form",
      `<h1>Order</h1>
<form onsubmit="event.preventDefault(); beacon('submit', [this.fullname.value, this.country.value, this.subscribe.checked, this.size.value].join('|'))">
  <label>Full name <input id="full-name" name="fullname" onchange="beacon('name', this.value)"></label>
  <label for="country">Country</label>
  <select id="country" name="country" onchange="beacon('country', this.value)">
    <option value="">Choose</option><option value="fr">France</option><option value="jp">Japan</option>
  </select>
  <label><input type="checkbox" name="subscribe" onchange="beacon('subscribe', this.checked)"> Subscribe to news</label>
  <fieldset><legend>Size</legend>
    <label><input type="radio" name="size" value="s" onchange="beacon('size', this.value)"> Small</label>
    <label><input type="radio" name="size" value="l" onchange="beacon('size', this.value)"> Large</label>
  </fieldset>
  <button type="submit">Place order</button>
</form>`,
    ),
  "/x/dropdown.html": () =>
    page(
      "Fruit picker",
      `<div class="picker">
  <button id="fruit" aria-haspopup="listbox" aria-expanded="false"
    onclick="const l = document.getElementById('fruits'); l.hidden = !l.hidden; this.setAttribute('aria-expanded', String(!l.hidden));">Choose a fruit</button>
  <ul id="fruits" role="listbox" hidden>
    <li role="option" onclick="beacon('fruit', this.textContent); document.getElementById('fruits').hidden = true; document.getElementById('fruit').textContent = this.textContent;">Apple</li>
    <li role="option" onclick="beacon('fruit', this.textContent); document.getElementById('fruits').hidden = true; document.getElementById('fruit').textContent = this.textContent;">Cherry</li>
  </ul>
</div>`,
    ),
  "/x/frame-outer.html": (site) =>
    page(
      "Checkout",
      `<h1>Checkout</h1><iframe title="Payment" src="${site.crossUrl("/x/frame-inner.html")}" width="400" height="200"></iframe>`,
    ),
  "/x/frame-inner.html": () =>
    page(
      "Payment",
      `<label>Card holder <input onchange="beacon('holder', this.value)"></label><button onclick="beacon('pay', 'clicked')">Pay now</button>`,
    ),
  "/x/shadow.html": () =>
    page(
      "Shadow",
      `<x-panel></x-panel>
<script>
customElements.define("x-panel", class extends HTMLElement {
  connectedCallback() {
    const root = this.attachShadow({ mode: "open" });
    root.innerHTML = '<button>Shadow action</button>';
    root.querySelector("button").addEventListener("click", () => beacon("shadow", "clicked"));
  }
});
</script>`,
    ),
  "/x/tabs.html": () =>
    page(
      "Tabs",
      `<a href="/x/details.html" target="_blank" onclick="beacon('open', 'details')">Open details</a>`,
    ),
  "/x/details.html": () =>
    page(
      "Details",
      `<h1>Details</h1><button onclick="beacon('confirm', 'details')">Confirm details</button>`,
    ),
  "/x/login.html": () =>
    page(
      "Sign in",
      `<form onsubmit="event.preventDefault(); beacon('login', document.getElementById('user').value + ':' + document.getElementById('pass').value)">
  <label>Username <input id="user" autocomplete="off"></label>
  <label>Password <input id="pass" type="password" autocomplete="off"></label>
  <button type="submit">Sign in</button>
</form>`,
    ),
  "/x/buttons.html": () =>
    page(
      "Two hundred buttons",
      `<div id="grid">${Array.from({ length: 200 }, (_, i) => `<button onclick="beacon('button', ${i + 1})">Add</button>`).join("")}</div>`,
    ),
  "/x/closed.html": () =>
    page(
      "Closed shadow",
      `<x-vault></x-vault>
<script>
customElements.define("x-vault", class extends HTMLElement {
  connectedCallback() {
    const root = this.attachShadow({ mode: "closed" });
    root.innerHTML = '<button>Open vault</button>';
    root.querySelector("button").addEventListener("click", () => beacon("vault", "opened"));
  }
});
</script>`,
    ),
};

/** Serves the pages and the beacon on `site`; returns what undoes it. */
export function serveExportPages(site: FixtureServer): () => void {
  const undo = Object.entries(EXPORT_PAGES).map(([path, html]) =>
    site.route(path, (_req, res) => {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(html(site));
    }),
  );
  undo.push(site.route("/beacon", (_req, res) => void res.writeHead(204).end()));
  return () => {
    for (const u of undo) u();
  };
}

/** The beacons the server received from index `from` on: ["name=Ada", ...]. */
export function beaconsSince(site: FixtureServer, from: number): string[] {
  return beaconsOf(site.requests.slice(from));
}

/** The beacons among `requests`, in order: ["name=Ada", ...]. */
export function beaconsOf(requests: readonly FixtureRequest[]): string[] {
  return requests
    .filter((r) => r.path.startsWith("/beacon?"))
    .map((r) => {
      const q = new URLSearchParams(r.path.slice("/beacon?".length));
      return `${q.get("what")}=${q.get("value")}`;
    });
}
