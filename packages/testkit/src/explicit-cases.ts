// The labelled set of explicit instructions: (page, instruction, what must happen). Used by the
// test that runs them all with no model (packages/deckhand/test/ops/explicit.test.ts) and by the
// `explicit` benchmark. The pages are fixtures/pages/explicit/*.html; each records the id of the
// element every input event reached in window.__hits (hits.js).
//
// `expect` is:
//   - an element id: the one element acted on (nothing else may receive an event);
//   - several ids: a multi-step instruction, each step on its element, in this order;
//   - "page": a key pressed on the page (no element's id receives a click or input);
//   - "scroll" (the page scrolled down), "scroll:ID" (element ID scrolled into view), "back" (the
//     previous page of the history), "goto:PATH" (the page at PATH opened); `{site}` in an
//     instruction stands for the fixture site's origin;
//   - "model": the instruction is not plain, or no single visible element fits it; with no model
//     act() throws MissingLLMConfigurationError and nothing happens (or, for a multi-step
//     instruction, only the steps in `before` happen, in that order);
//   - "not-done": the one element that fits cannot take the step (disabled, no such option);
//     act() reports failure and nothing happens.
//
// `split` says which half a case belongs to: "dev" cases were written alongside the grammar and
// are asserted one by one; "held-out" cases (explicit-heldout.ts) were written before the grammar
// was widened and are only measured (and checked never to act wrongly).

export type ExplicitExpectation = string | readonly string[];

export interface ExplicitCase {
  /** The fixture page, fixtures/pages/explicit/PAGE.html. */
  page: string;
  instruction: string;
  expect: ExplicitExpectation;
  /** For "model": the ids acted on, in order, by the steps before the one that needs a model. */
  before?: readonly string[];
  /** Which events show the act: clicks, keys and input (default), mouseover, or focus. */
  events?: "hover" | "focus";
  variables?: Record<string, string>;
  /** What the case is about (look-alike, decoy, duplicate, only looks explicit, ...). */
  note?: string;
  split?: "dev" | "held-out";
}

const email = { email: "ann@example.com" };

const DEV_CASES: ExplicitCase[] = [
  // ---------- login: look-alike names ----------
  { page: "login", instruction: "click the Sign in button", expect: "sign-in" },
  { page: "login", instruction: "click Sign in", expect: "sign-in", note: "look-alike: Sign in with Google" },
  { page: "login", instruction: "Click on the 'Sign in' button.", expect: "sign-in" },
  { page: "login", instruction: "press the Sign in button", expect: "sign-in" },
  { page: "login", instruction: "click the sign in button", expect: "sign-in" },
  { page: "login", instruction: "click Sign in with Google", expect: "sign-in-google" },
  { page: "login", instruction: "click the Sign up link", expect: "signup-link" },
  { page: "login", instruction: "click Sign-in", expect: "model", note: "look-alike spelling" },
  { page: "login", instruction: "type %email% into the Email field", expect: "email", variables: email },
  { page: "login", instruction: "type 'secret' into the Password field", expect: "password" },
  { page: "login", instruction: "enter %email% in the Email field", expect: "email", variables: email },
  { page: "login", instruction: "fill the Email field with %email%", expect: "email", variables: email },
  {
    page: "login",
    instruction: "type my email into the Email field",
    expect: "model",
    note: "unquoted text",
  },
  {
    page: "login",
    instruction: "type %mail% into the Email field",
    expect: "model",
    variables: email,
    note: "a variable that is not given",
  },
  { page: "login", instruction: "type 'hello' into the email", expect: "email" },
  { page: "login", instruction: "type '123456' into the One-time code field", expect: "otp" },
  {
    page: "login",
    instruction: "check Remember me",
    expect: "remember",
    note: "look-alike: Remember this device",
  },
  { page: "login", instruction: "check the Remember me checkbox", expect: "remember" },
  { page: "login", instruction: "tick Remember this device", expect: "remember-device" },
  { page: "login", instruction: "check Remember", expect: "model", note: "a prefix of two names" },
  { page: "login", instruction: "click Forgot password?", expect: "forgot" },
  { page: "login", instruction: "click the Help button", expect: "help-icon", note: "name from aria-label" },
  { page: "login", instruction: "click Pricing", expect: "pricing-link" },
  { page: "login", instruction: "press Enter", expect: "page" },
  {
    page: "login",
    instruction: "click the login button",
    expect: "model",
    note: "a description, not a name",
  },
  { page: "login", instruction: "sign in", expect: "model" },
  { page: "login", instruction: "click the button to sign in", expect: "model" },
  { page: "login", instruction: "click the blue button", expect: "model" },
  { page: "login", instruction: "click Sign in if it is there", expect: "model", note: "a condition" },
  {
    page: "login",
    instruction: "type 'ann' into the Email field and click Sign in",
    expect: ["email", "sign-in"],
    note: "two steps",
  },
  { page: "login", instruction: "click the Sign in button twice", expect: "model" },
  { page: "login", instruction: "log in with %email%", expect: "model", variables: email },

  // ---------- sections: duplicates in different sections ----------
  { page: "sections", instruction: "click Save", expect: "model", note: "one per section" },
  { page: "sections", instruction: "click the Save button", expect: "model" },
  { page: "sections", instruction: "click the Save button in the Billing section", expect: "model" },
  { page: "sections", instruction: "click the first Save button", expect: "model" },
  {
    page: "sections",
    instruction: "click the Save button under Shipping address",
    expect: "shipping-save",
    note: "a section named by its heading",
  },
  { page: "sections", instruction: "click Save all", expect: "save-all" },
  { page: "sections", instruction: "click the Save all button", expect: "save-all" },
  { page: "sections", instruction: "click Edit", expect: "model" },
  { page: "sections", instruction: "type 'Main St 1' into the Street field", expect: "model" },
  { page: "sections", instruction: "type 'Acme' into the Company field", expect: "billing-company" },
  { page: "sections", instruction: "select Germany from the Country dropdown", expect: "model" },
  { page: "sections", instruction: "select Germany from the Country dropdown in Shipping", expect: "model" },
  {
    page: "sections",
    instruction: "select East Germany from the Region dropdown",
    expect: "shipping-region",
  },
  { page: "sections", instruction: "select South from the Region list", expect: "shipping-region" },
  { page: "sections", instruction: "select North from Region", expect: "shipping-region" },
  { page: "sections", instruction: "choose Express", expect: "speed-express", note: "a radio" },
  { page: "sections", instruction: "check Express", expect: "speed-express" },
  { page: "sections", instruction: "click Express", expect: "speed-express" },
  { page: "sections", instruction: "check Gift wrap", expect: "gift", note: "look-alike: Gift wrap note" },
  { page: "sections", instruction: "tick Gift wrap note", expect: "gift-note" },
  { page: "sections", instruction: "click Place order", expect: "place-order" },
  { page: "sections", instruction: "click Place order help", expect: "place-order-help" },
  {
    page: "sections",
    instruction: "click the Place order link",
    expect: "model",
    note: "the link is 'Place order help'",
  },
  {
    page: "sections",
    instruction: "type 'Leave at the door' into the Delivery notes field",
    expect: "shipping-notes",
  },
  { page: "sections", instruction: "type 'x' into Delivery notes", expect: "shipping-notes" },
  { page: "sections", instruction: "click Billing address", expect: "model", note: "a heading" },
  {
    page: "sections",
    instruction: "type 'Acme' into the Company field, then click Save",
    expect: "model",
    before: ["billing-company"],
    note: "the first step is explicit, the second is not (two Save buttons)",
  },

  // ---------- decoys: what a person cannot see ----------
  { page: "decoys", instruction: "click Delete", expect: "delete" },
  { page: "decoys", instruction: "click Delete account", expect: "model", note: "transparent" },
  { page: "decoys", instruction: "click Subscribe", expect: "model", note: "visually hidden" },
  { page: "decoys", instruction: "click Continue", expect: "continue", note: "its twin is off the page" },
  { page: "decoys", instruction: "click Close", expect: "close", note: "its twin is aria-hidden" },
  { page: "decoys", instruction: "click Buy now", expect: "model", note: "visibility: hidden" },
  { page: "decoys", instruction: "click Apply coupon", expect: "model", note: "in a closed details" },
  { page: "decoys", instruction: "click Submit order", expect: "not-done", note: "disabled" },
  { page: "decoys", instruction: "click Export data", expect: "model", note: "transparent parent" },
  { page: "decoys", instruction: "click Export CSV", expect: "export-csv" },
  { page: "decoys", instruction: "type 'neo' into the Nickname field", expect: "nickname" },
  {
    page: "decoys",
    instruction: "type 'x' into the Alias field",
    expect: "model",
    note: "transparent field",
  },
  { page: "decoys", instruction: "type 'x' into the Alias (public) field", expect: "alias-public" },
  { page: "decoys", instruction: "check Marketing emails", expect: "marketing" },
  { page: "decoys", instruction: "check Tracking", expect: "model", note: "off the page" },
  { page: "decoys", instruction: "click Download report", expect: "fake-button", note: "role=button div" },
  { page: "decoys", instruction: "click the Download report button", expect: "fake-button" },
  { page: "decoys", instruction: "click the hidden Delete account button", expect: "model" },

  // ---------- widgets: kinds of control ----------
  { page: "widgets", instruction: "click the Specs tab", expect: "tab-specs" },
  { page: "widgets", instruction: "click Reviews", expect: "tab-reviews" },
  { page: "widgets", instruction: "click the Overview tab", expect: "tab-overview" },
  { page: "widgets", instruction: "click File", expect: "menu-file" },
  { page: "widgets", instruction: "click the Edit menu item", expect: "menu-edit" },
  {
    page: "widgets",
    instruction: "select Germany from the Country dropdown",
    expect: "country",
    note: "look-alike option: East Germany",
  },
  { page: "widgets", instruction: "select 'France' from the Country select", expect: "country" },
  {
    page: "widgets",
    instruction: "select Italy from the Country dropdown",
    expect: "not-done",
    note: "no such option",
  },
  {
    page: "widgets",
    instruction: "select the second option from the Country dropdown",
    expect: "not-done",
    note: "only looks explicit; no option has that name",
  },
  {
    page: "widgets",
    instruction: "select German from the Language dropdown",
    expect: "model",
    note: "custom dropdown",
  },
  { page: "widgets", instruction: "uncheck Newsletter", expect: "newsletter" },
  { page: "widgets", instruction: "check I accept the terms and conditions", expect: "terms" },
  { page: "widgets", instruction: "check the terms", expect: "model" },
  { page: "widgets", instruction: "type 'Nice' into the Comment field", expect: "comment" },
  {
    page: "widgets",
    instruction: "type 'shoes' into the Search box",
    expect: "search",
    note: "a Search button too",
  },
  { page: "widgets", instruction: "click Search", expect: "search-button" },
  { page: "widgets", instruction: "click the Search button", expect: "search-button" },
  { page: "widgets", instruction: "click Search tips", expect: "search-tips" },
  { page: "widgets", instruction: "type '3' into the Quantity field", expect: "quantity" },
  { page: "widgets", instruction: "type 'Ann' into the First name field", expect: "first-name" },
  { page: "widgets", instruction: "fill First name with 'Ann'", expect: "first-name" },
  { page: "widgets", instruction: "type 'Lee' into the Last name field", expect: "last-name" },
  { page: "widgets", instruction: "type 'Ann' into the name field", expect: "model" },
  { page: "widgets", instruction: "double-click Rename", expect: "rename" },
  { page: "widgets", instruction: "click Add", expect: "add", note: "look-alike: Add to cart" },
  { page: "widgets", instruction: "click the Add to cart button", expect: "add-to-cart" },
  { page: "widgets", instruction: "click Next", expect: "next-link", note: "look-alike: Next page" },
  { page: "widgets", instruction: "click the next button", expect: "model", note: "Next is a link" },
  { page: "widgets", instruction: "hover over Add", expect: "add", events: "hover" },
  { page: "widgets", instruction: "press Tab", expect: "page" },
  { page: "widgets", instruction: "press Escape", expect: "page" },
  { page: "widgets", instruction: "press Enter in the Comment field", expect: "comment" },
  { page: "widgets", instruction: "click the cheapest option", expect: "model" },
  { page: "widgets", instruction: "add the shoes to the cart", expect: "model" },

  // ---------- frames and shadow roots ----------
  { page: "frames", instruction: "click Pay now", expect: "pay-now", note: "in an iframe" },
  { page: "frames", instruction: "click Cancel", expect: "model", note: "one outside, one in the iframe" },
  {
    page: "frames",
    instruction: "type '4242 4242 4242 4242' into the Card number field",
    expect: "card-number",
  },
  { page: "frames", instruction: "click Open chat", expect: "open-chat", note: "in a shadow root" },
  { page: "frames", instruction: "type 'hi' into the Message field", expect: "chat-message" },
  { page: "frames", instruction: "click the Pay now link", expect: "model" },
  // ---------- issue 24: the phrasings people use ----------
  // a kind word before an unquoted name
  { page: "login", instruction: "Click button Sign in.", expect: "sign-in" },
  { page: "login", instruction: "press the link Pricing", expect: "pricing-link" },
  { page: "login", instruction: "click the link Sign in", expect: "model", note: "Sign in is a button" },
  { page: "widgets", instruction: "click tab Specs", expect: "tab-specs" },
  { page: "widgets", instruction: "click button Next", expect: "model", note: "Next is a link" },
  // the only one of its kind (in the page, or in the open dialog)
  { page: "dev-dialog", instruction: 'Enter "notes.txt" into the text field', expect: "new-name" },
  { page: "dev-dialog", instruction: "Untick the checkbox", expect: "keep-ext" },
  { page: "dev-dialog", instruction: "Click the button.", expect: "model", note: "two in the dialog" },
  { page: "dev-lists", instruction: "Select Large from the list", expect: "size", note: "the only list" },
  { page: "dev-lists", instruction: "Type 'hi' into the text area", expect: "note" },
  {
    page: "dev-lists",
    instruction: "Type 'hi' into the text field",
    expect: "model",
    note: "a note and a quantity",
  },
  { page: "login", instruction: "Tick the checkbox", expect: "model", note: "two checkboxes" },
  { page: "widgets", instruction: "Click the switch", expect: "model", note: "a switch and checkboxes" },
  {
    page: "frames",
    instruction: "Type 'hi' into the field",
    expect: "model",
    note: "one in the frame, one in a shadow root",
  },
  // the modal dialog: what is behind it cannot be reached
  { page: "dev-dialog", instruction: "click Cancel", expect: "dialog-cancel" },
  { page: "dev-dialog", instruction: "click Rename", expect: "dialog-rename" },
  { page: "dev-dialog", instruction: "click Delete", expect: "model", note: "behind the dialog" },
  {
    page: "dev-dialog",
    instruction: "type 'x' into Search files",
    expect: "model",
    note: "behind the dialog",
  },
  { page: "dev-dialog", instruction: "click Help", expect: "model", note: "visually hidden" },
  // a container between the kind and the name, or after the name
  {
    page: "dev-dialog",
    instruction: 'Click the button in the dialog labeled "Cancel"',
    expect: "dialog-cancel",
  },
  { page: "dev-dialog", instruction: "click Rename in the Rename file dialog", expect: "dialog-rename" },
  {
    page: "sections",
    instruction: "click the Save button in the Billing address section",
    expect: "billing-save",
  },
  { page: "sections", instruction: "click Edit in the Shipping address section", expect: "shipping-edit" },
  {
    page: "sections",
    instruction: "select Spain from the Country dropdown in Shipping address",
    expect: "shipping-country",
  },
  {
    page: "sections",
    instruction: "type 'Main St 1' into the Street field under Billing address",
    expect: "billing-street",
  },
  {
    page: "sections",
    instruction: "click Save in the Delivery section",
    expect: "model",
    note: "no Save there",
  },
  {
    page: "sections",
    instruction: "click the Save button in the Payment section",
    expect: "model",
    note: "no such section",
  },
  { page: "dev-lists", instruction: "click Ship in the row for B-200", expect: "ship-2" },
  {
    page: "dev-lists",
    instruction: "tick the checkbox in row 3",
    expect: "pick-3",
    note: "the third body row",
  },
  { page: "dev-lists", instruction: "click Ship in the A-100 row", expect: "ship-1" },
  { page: "dev-lists", instruction: "click Ship in row 4", expect: "model", note: "three rows" },
  { page: "dev-lists", instruction: "click Buy in the Plus item", expect: "buy-plus" },
  { page: "dev-lists", instruction: "click the Buy button for Basic", expect: "buy-basic" },
  { page: "dev-lists", instruction: "click Buy", expect: "model", note: "two items and a frame" },
  { page: "dev-lists", instruction: "check Email in the Alerts group", expect: "alerts-email" },
  { page: "dev-lists", instruction: "check Email under Reports", expect: "reports-email" },
  { page: "dev-lists", instruction: "check Email", expect: "model", note: "two groups" },
  { page: "dev-lists", instruction: "click Orders in the navigation", expect: "nav-orders" },
  { page: "dev-lists", instruction: "click Terms in the footer", expect: "terms-link" },
  {
    page: "dev-lists",
    instruction: "click Terms in the navigation",
    expect: "model",
    note: "it is in the footer",
  },
  // select / choose a radio, checkbox or option by its name; tick, untick; focus; clear
  { page: "sections", instruction: "select Express in the Delivery section", expect: "speed-express" },
  { page: "sections", instruction: "Choose 'Gift wrap'", expect: "gift" },
  { page: "sections", instruction: "select Germany", expect: "model", note: "an option of two lists" },
  { page: "widgets", instruction: "untick Newsletter", expect: "newsletter" },
  { page: "widgets", instruction: "focus on the Comment field", expect: "comment", events: "focus" },
  { page: "widgets", instruction: "click into the First name field", expect: "first-name" },
  {
    page: "widgets",
    instruction: "focus the Search tips link",
    expect: "model",
    note: "focus is for fields",
  },
  { page: "dev-dialog", instruction: "clear the New name field", expect: "new-name" },
  { page: "widgets", instruction: "clear the Quantity field", expect: "quantity" },
  // scroll, back, open
  { page: "dev-lists", instruction: "scroll down", expect: "scroll" },
  { page: "dev-lists", instruction: "Scroll down to the Questions heading", expect: "scroll:faq" },
  { page: "dev-lists", instruction: "scroll to Top", expect: "scroll:footer-top" },
  {
    page: "dev-lists",
    instruction: "scroll to the Answers section",
    expect: "model",
    note: "no such heading",
  },
  { page: "dev-lists", instruction: "scroll a bit", expect: "model" },
  { page: "widgets", instruction: "go back", expect: "back" },
  { page: "login", instruction: "Go back.", expect: "back" },
  { page: "login", instruction: "go back to where you were", expect: "model" },
  { page: "login", instruction: "open {site}/explicit/widgets.html", expect: "goto:/explicit/widgets.html" },
  { page: "login", instruction: "open the pricing page", expect: "model" },
  { page: "login", instruction: "open file:///etc/passwd", expect: "model", note: "not a web address" },
  // several steps
  {
    page: "widgets",
    instruction: 'Enter "Bob" into the First name field and press Search',
    expect: ["first-name", "search-button"],
  },
  {
    page: "dev-lists",
    instruction: "Check SMS, Push and Weekly summary, then click Archive",
    expect: ["alerts-sms", "alerts-push", "reports-weekly", "archive"],
  },
  {
    page: "widgets",
    instruction: "Type 'Ann' into First name and 'Lee' into Last name",
    expect: ["first-name", "last-name"],
  },
  {
    page: "widgets",
    instruction: "check I accept the terms and conditions",
    expect: "terms",
    note: "'and' inside a name",
  },
  {
    page: "login",
    instruction:
      "type %email% into the Email field, type 'pw' into the Password field, check Remember me, then click Sign in",
    expect: ["email", "password", "remember", "sign-in"],
    variables: email,
  },
  {
    page: "widgets",
    instruction: "type 'Ann' into the First name field, then click the cheapest option",
    expect: "model",
    before: ["first-name"],
  },
  {
    page: "dev-lists",
    instruction: "check SMS and Email",
    expect: "model",
    note: "Email is in two groups: nothing is done",
  },
  { page: "widgets", instruction: "click Add and then click Add to cart", expect: ["add", "add-to-cart"] },
  // names that differ only in case
  { page: "dev-lists", instruction: "click Submit", expect: "submit-upper" },
  { page: "dev-lists", instruction: "click submit", expect: "submit-lower" },
  { page: "dev-lists", instruction: "click SUBMIT", expect: "model", note: "neither is written so" },
  { page: "dev-lists", instruction: "click Export", expect: "export-a" },
  { page: "dev-lists", instruction: "click eXport", expect: "model" },
  {
    page: "dev-lists",
    instruction: "click archive",
    expect: "archive",
    note: "the exact twin is transparent",
  },
  // quotes, politeness, naming words
  { page: "login", instruction: "click \u00abSign in\u00bb", expect: "sign-in" },
  { page: "login", instruction: "click \u201cSign up\u201d", expect: "signup-link" },
  { page: "login", instruction: "Please click the button called Sign in.", expect: "sign-in" },
  { page: "login", instruction: "click the one labelled Help", expect: "help-icon" },
  { page: "login", instruction: "click the link named Pricing, please", expect: "pricing-link" },
  { page: "widgets", instruction: "click the button that says Add to cart", expect: "add-to-cart" },
  { page: "widgets", instruction: "click the one that says Next page", expect: "next-page" },
  // text to type as a field's value
  { page: "widgets", instruction: "set Quantity to 3", expect: "quantity" },
  { page: "login", instruction: "fill Email with ada@example.com", expect: "email" },
  { page: "widgets", instruction: "set Country to France", expect: "country", note: "a <select>" },
  { page: "widgets", instruction: "set Language to German", expect: "model", note: "a custom dropdown" },
  {
    page: "widgets",
    instruction: "set the quantity to the number of guests",
    expect: "model",
    note: "a description of a value",
  },
  {
    page: "login",
    instruction: "set Email to my work address",
    expect: "model",
    note: "a description of a value",
  },
  // text to type after a colon, into the field that has the focus
  { page: "dev-dialog", instruction: "Type: notes.txt", expect: "new-name", note: "the dialog focused it" },
  { page: "dev-dialog", instruction: "type 'notes.txt'", expect: "new-name" },
  { page: "login", instruction: "Type: hello world", expect: "model", note: "nothing has the focus" },
  { page: "dev-dialog", instruction: "Type: my new name", expect: "model", note: "a description of a value" },
  // a key and a button of the same name
  { page: "dev-lists", instruction: "press Home", expect: "page", note: "no element named Home" },
  { page: "widgets", instruction: "press Enter", expect: "page" },
];

/** The development half: asserted case by case. */
export const EXPLICIT_CASES: readonly ExplicitCase[] = DEV_CASES.map((c) => ({
  ...c,
  split: "dev" as const,
}));
