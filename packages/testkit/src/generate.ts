// Deterministic generated pages for size and extraction tests: the same arguments always give the
// same bytes, so snapshot sizes and token counts can be compared between runs.
import { escapeHtml } from "./html.ts";

export interface LargePageOptions {
  /** How many elements the document should have, counting every tag from <html> down. */
  elements: number;
  /** Varies the texts; the structure and the element count stay the same. Default 1. */
  seed?: number;
}

/** A small, fast, seedable PRNG (mulberry32); Math.random cannot be seeded. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const words = (
  "amber basalt cedar delta ember fjord garnet harbor iris juniper kelp lagoon maple nickel onyx " +
  "pepper quartz raven saffron tundra umber violet willow xenon yarrow zephyr"
).split(" ");
const verbs = ["Open", "Archive", "Export", "Share", "Rename", "Pin", "Review", "Merge", "Sync", "Tag"];
const statuses = ["active", "pending", "closed", "on hold"];

function pick<T>(list: readonly T[], random: () => number): T {
  return list[Math.floor(random() * list.length)]!;
}

function capitalize(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}

/**
 * A page of about `elements` elements (exactly that many once it is above the fixed skeleton of
 * about 30): a nav of links (8% of the elements), a large data table with some linked cells
 * (to 75%), a grid of distinctly labelled buttons (the rest), and last in the document one button
 * named "Target button"
 * (id `target`) that writes `clicked` into `#target-result`. It tests that a large snapshot still
 * reaches the end of the page.
 */
export function largePageHtml(options: LargePageOptions): string {
  const random = seededRandom(options.seed ?? 1);
  // Elements outside the generated sections: html head meta title style body header h1 nav ul main
  // (11), table section: section h2 table caption thead tr th*5 tbody (12), buttons section:
  // section h2 div (3), footer output button (3).
  const fixed = 29;
  const budget = Math.max(0, options.elements - fixed);
  let used = 0;

  const links: string[] = [];
  while (used + 2 <= budget * 0.08) {
    const n = links.length + 1;
    const word = pick(words, random);
    links.push(`<li><a href="/docs/${word}-${n}">${capitalize(word)} guide ${n}</a></li>`);
    used += 2;
  }

  const rows: string[] = [];
  while (used + 7 <= budget * 0.75) {
    const n = rows.length + 1;
    const name = `${capitalize(pick(words, random))} ${pick(words, random)}`;
    const linked = n % 3 === 1; // a link in every third row: a tr, five td and an a
    const nameCell = linked ? `<a href="/items/${n}">${name}</a>` : name;
    const amount = (random() * 10_000).toFixed(2);
    rows.push(
      `<tr><td>${n}</td><td>${nameCell}</td><td>${pick(words, random)}</td><td>${amount}</td><td>${pick(statuses, random)}</td></tr>`,
    );
    used += linked ? 7 : 6;
  }

  // Buttons fill the rest exactly (one element each).
  const buttons: string[] = [];
  while (used < budget) {
    const n = buttons.length + 1;
    buttons.push(`<button type="button">${pick(verbs, random)} ${pick(words, random)} ${n}</button>`);
    used += 1;
  }

  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Large fixture page</title>
<style>.grid { display: grid; grid-template-columns: repeat(8, 1fr); gap: 4px; } td, th { padding: 2px 6px; }</style>
</head>
<body>
<header><h1>Large fixture page</h1></header>
<nav aria-label="Documentation"><ul>
${links.join("\n")}
</ul></nav>
<main>
<section><h2>Records</h2>
<table><caption>Records</caption>
<thead><tr><th>#</th><th>Name</th><th>Region</th><th>Amount</th><th>Status</th></tr></thead>
<tbody>
${rows.join("\n")}
</tbody></table></section>
<section><h2>Actions</h2><div class="grid">
${buttons.join("\n")}
</div></section>
</main>
<footer><output id="target-result"></output><button type="button" id="target" onclick="document.getElementById('target-result').textContent = 'clicked'">Target button</button></footer>
</body>
</html>
`;
}

export interface ListProduct {
  name: string;
  /** Like "$12.34". */
  price: string;
  /** "/products/<n>", served by the fixture server. */
  href: string;
}

const adjectives = (
  "Brass Cedar Linen Copper Walnut Marble Velvet Granite Bamboo Cobalt Ivory Slate Amber Oak " +
  "Silver Wool Clay Glass Iron Cotton"
).split(" ");
const nouns = (
  "Lamp Chair Kettle Vase Clock Mirror Desk Rug Shelf Bowl Stool Basket Candle Frame Tray Pillow " +
  "Jug Bench Mug Planter Ladder Hook Crate Lantern Spoon"
).split(" ");

/** Row `n` (from 1) of longListHtml, so a test can compute what extraction should return. */
export function listProduct(n: number): ListProduct {
  const i = n - 1;
  const combos = adjectives.length * nouns.length;
  const base = `${adjectives[i % adjectives.length]} ${nouns[Math.floor(i / adjectives.length) % nouns.length]}`;
  // Names stay unique past the 500 combinations by numbering the later rounds.
  const name = i < combos ? base : `${base} ${Math.floor(i / combos) + 1}`;
  const cents = ((n * 7919) % 9000) + 100;
  return { name, price: `$${(cents / 100).toFixed(2)}`, href: `/products/${n}` };
}

/** A product table with `rows` rows of name, price and a link to `/products/<n>`. */
export function longListHtml(rows: number): string {
  const body: string[] = [];
  for (let n = 1; n <= rows; n++) {
    const product = listProduct(n);
    const name = escapeHtml(product.name);
    body.push(
      `<tr><td>${name}</td><td>${product.price}</td><td><a href="${product.href}">View ${name}</a></td></tr>`,
    );
  }
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Product list</title></head>
<body>
<h1>Products</h1>
<p>${rows} products, in catalogue order.</p>
<table id="products"><caption>Product catalogue</caption>
<thead><tr><th>Name</th><th>Price</th><th>Details</th></tr></thead>
<tbody>
${body.join("\n")}
</tbody></table>
</body>
</html>
`;
}

/** The page behind a product link of longListHtml. */
export function productPageHtml(n: number): string {
  const product = listProduct(n);
  const name = escapeHtml(product.name);
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>${name}</title></head>
<body>
<p><a href="/generated/list">All products</a></p>
<h1 id="name">${name}</h1>
<p>Price: <span id="price">${product.price}</span></p>
</body>
</html>
`;
}
