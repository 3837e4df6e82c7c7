"use strict";
// The drops: a card for each event with a room — its live view, its controls, its draw
// and its charts — and the form that defines or changes one. Cards are made once and
// their text updated in place, so a refresh never takes the keyboard's focus away.
// Every change names the room's version the page showed (`expectedVersion`): if another
// operator changed the drop meanwhile, the origin refuses it and the page says so.

const cards = new Map();
const FIELDS = ["eventId", "name", "stock", "amount", "gated", "admitLimit", "admitPerMinute",
  "passTtlSeconds", "opensAt", "prequeueFrom", "shards"];
const NUMBERS = ["stock", "amount", "admitLimit", "admitPerMinute", "passTtlSeconds", "shards"];
const MOMENTS = ["opensAt", "prequeueFrom"];

function element(tag, attributes, text) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes || {})) node.setAttribute(key, value);
  if (text != null) node.textContent = text;
  return node;
}

function stateName(room, status) {
  if (room.state === "CLOSED" || (status && status.closed)) return "Closed";
  if (room.state === "PAUSED") return "Paused";
  return "Open";
}

// One figure of the live view: a term and its value, updated by name.
function figures(names) {
  const list = element("dl", { class: "figures" });
  const values = {};
  for (const [key, term] of names) {
    const item = element("div");
    values[key] = element("dd", { "data-figure": key });
    item.append(element("dt", {}, term), values[key]);
    list.append(item);
  }
  return { list, values };
}

function makeCard(eventId) {
  const index = cards.size;
  const node = element("article", { class: "drop", "aria-labelledby": `drop-title-${index}`, "data-event": eventId });
  const title = element("h3", { id: `drop-title-${index}` });
  const name = element("span", { class: "drop-name" });
  const badge = element("span", { class: "badge", "data-figure": "state" });
  title.append(name, " ", badge);
  const notice = element("p", { class: "notice", hidden: "" });
  const live = figures([
    ["waiting", "Waiting"], ["prequeued", "Prequeued"], ["passesLive", "Passes live"],
    ["issued", "Passes issued in the last minute"], ["sold", "Sold"], ["reserved", "Reserved (paying now)"],
    ["price", "Price"], ["opensAt", "Opens at"], ["version", "Version"],
  ]);
  const actions = element("div", { class: "actions" });
  const buttons = {};
  for (const [action, label] of [["change", "Change…"], ["pause", "Pause…"], ["resume", "Resume…"], ["close", "Close…"]]) {
    buttons[action] = element("button", { type: "button", "data-action": action }, label);
    buttons[action].setAttribute("aria-describedby", `drop-title-${index}`);
    buttons[action].addEventListener("click", () => act(eventId, action, buttons[action]));
    actions.append(buttons[action]);
  }
  const draw = element("div", { class: "draw", hidden: "" });
  const charts = element("div", { class: "charts" });
  node.append(title, notice, live.list, actions, draw, charts);
  const card = { node, name, badge, notice, values: live.values, buttons, draw, charts, drop: null, drawShown: false };
  cards.set(eventId, card);
  return card;
}

// The card's text from `drop` (GET /admin/events/{eventId}).
function updateCard(card, drop) {
  card.drop = drop;
  const room = drop.room;
  const status = drop.roomStatus || null;
  const settings = room.settings || {};
  const state = stateName(room, status);
  card.name.textContent = settings.name ? `${settings.name} (${drop.eventId})` : drop.eventId;
  card.badge.textContent = state;
  card.badge.className = `badge badge-${state.toLowerCase()}`;
  const v = card.values;
  const known = (value) => (status ? count(value) : "—");
  v.waiting.textContent = known(status && status.waiting);
  v.prequeued.textContent = known(status && status.prequeued);
  v.passesLive.textContent = status ? `${count(status.passesLive)} of ${count(status.admitLimit)}` : "—";
  v.issued.textContent = status
    ? `${count(status.passesIssuedLastMinute)} of ${status.admitPerMinute == null ? "no limit" : count(status.admitPerMinute)}`
    : "—";
  v.sold.textContent = `${count(drop.sold)} of ${count(drop.stock)}`;
  v.reserved.textContent = count(drop.reserved);
  v.price.textContent = money(drop.amount, drop.currency);
  v.opensAt.textContent = settings.opensAt == null ? "no opening: open now" : moment(settings.opensAt);
  v.version.textContent = String(room.version);
  const notices = [];
  if (drop.roomError) notices.push(`The edge's room could not be read: ${typeof drop.roomError === "string" ? drop.roomError : JSON.stringify(drop.roomError)}`);
  if (status && status.paymentsPausedUntil != null) notices.push(`Payments are paused because the PG is down, until ${moment(status.paymentsPausedUntil)}: nobody new is admitted meanwhile.`);
  if (status && status.soldOut) notices.push("Sold out: newcomers are turned away.");
  card.notice.textContent = notices.join(" ");
  card.notice.hidden = notices.length === 0;
  card.buttons.pause.disabled = state !== "Open";
  card.buttons.resume.disabled = state !== "Paused";
  card.buttons.close.disabled = state === "Closed";
  card.buttons.change.disabled = state === "Closed";
  updateDraw(card, status);
}

function updateDraw(card, status) {
  const drawn = status && status.drawSeed;
  card.draw.hidden = !drawn;
  if (!drawn) return;
  let summary = card.draw.querySelector(".draw-summary");
  if (!summary) {
    summary = element("p", { class: "draw-summary" });
    const show = element("button", { type: "button" }, "Show the drawn list");
    show.addEventListener("click", () => showDrawn(card, 0));
    card.draw.append(summary, show, element("div", { class: "drawn" }));
  }
  summary.textContent = `Prequeue drawn at ${moment(status.drawnAt)} with seed ${status.drawSeed}: ` +
    `${count(status.drawn)} placed${status.drawing ? ", still drawing" : ""}.`;
}

const DRAWN_PAGE = 50;

// The draw's people in drawn order from place `from`, for audit.
async function showDrawn(card, from) {
  try {
    const list = await api("GET", `/admin/events/${encodeURIComponent(card.drop.eventId)}/draw?from=${from}&limit=${DRAWN_PAGE}`);
    const table = element("table");
    table.append(element("caption", {}, `Drawn order from place ${from + 1} (seed ${list.drawSeed})`));
    const head = element("tr");
    head.append(element("th", { scope: "col" }, "Place"), element("th", { scope: "col" }, "User"));
    table.append(element("thead"), element("tbody"));
    table.tHead.append(head);
    list.people.forEach((user, i) => {
      const tr = element("tr");
      tr.append(element("td", {}, count(from + i + 1)), element("td", {}, user));
      table.tBodies[0].append(tr);
    });
    const holder = card.draw.querySelector(".drawn");
    holder.replaceChildren(table);
    if (list.people.length === DRAWN_PAGE) {
      const next = element("button", { type: "button" }, `Next ${DRAWN_PAGE}`);
      next.addEventListener("click", () => showDrawn(card, from + DRAWN_PAGE));
      holder.append(next);
    }
    table.setAttribute("tabindex", "-1");
    table.focus();
  } catch (err) { say(err.message); }
}

// The card's charts from the history's samples for its drop.
function updateCharts(card, samples, from, to) {
  const points = (pick) => samples.map((s) => [s.atMs, pick(s)]);
  const inLine = (s) => (s.waiting == null ? null : s.waiting + (s.prequeued || 0));
  card.charts.replaceChildren(
    lineChart({ title: "People in line", unit: "", from, to, series: [{ name: "In line", points: points(inLine) }] }),
    lineChart({ title: "Admissions per minute", unit: "", from, to, series: [{ name: "Passes issued in the last minute", points: points((s) => s.issuedLastMinute) }] }),
    lineChart({ title: "Confirms every 5 s", unit: "", from, to, series: [
      { name: "Approved", points: points((s) => s.approved) },
      { name: "Failed", points: points((s) => s.failed) },
      { name: "UNKNOWN", points: points((s) => s.unknown) },
    ] }),
  );
}

// Every drop (events with a room), each card brought up to date; cards of drops no
// longer listed go.
async function refreshDrops(events, history) {
  const withRoom = events.filter((e) => e.room);
  const details = await Promise.all(withRoom.map((e) => api("GET", `/admin/events/${encodeURIComponent(e.eventId)}`)));
  const holder = $("drops");
  for (const drop of details) {
    const card = cards.get(drop.eventId) || makeCard(drop.eventId);
    if (!card.node.isConnected) holder.append(card.node);
    updateCard(card, drop);
    if (history) updateCharts(card, history.drops[drop.eventId] || [], history.nowMs - history.windowMs, history.nowMs);
  }
  for (const [eventId, card] of cards) {
    if (!details.some((d) => d.eventId === eventId)) { card.node.remove(); cards.delete(eventId); }
  }
  $("no-drops").hidden = details.length > 0;
}

const CONSEQUENCES = {
  pause: (drop) => ({
    title: `Pause ${drop.eventId}?`,
    text: "No new pass is issued while the drop is paused. Passes already issued keep working, " +
      "and everyone keeps their place in line. Resume lets the line move again.",
    go: "Pause the drop",
  }),
  resume: (drop) => {
    const perMinute = drop.roomStatus && drop.roomStatus.admitPerMinute;
    return {
      title: `Resume ${drop.eventId}?`,
      text: "Passes are issued again to the people at the front of the line" +
        (perMinute ? `, at most ${count(perMinute)} a minute.` : ", as fast as passes free up."),
      go: "Resume the drop",
    };
  },
  close: (drop) => ({
    title: `Close ${drop.eventId} for good?`,
    text: "Closing is final and cannot be undone. Newcomers are turned away and nobody else in " +
      "line gets a pass. Passes already issued keep working until they expire.",
    go: "Close the drop",
    typed: drop.eventId,
  }),
};

// A control of a drop's card: the change form, or a state change once confirmed.
function act(eventId, action, button) {
  const card = cards.get(eventId);
  if (!card || !card.drop) return;
  if (action === "change") { fillForm(card.drop); return; }
  const version = card.drop.room.version;
  const consequence = CONSEQUENCES[action](card.drop);
  confirmThen(consequence, button, async () => {
    await api("POST", `/admin/events/${encodeURIComponent(eventId)}/${action}`, { expectedVersion: version });
    note(`${eventId} is ${{ pause: "paused", resume: "open", close: "closed" }[action]} now.`);
  });
}

// The dialog: says what `consequence` does, and runs `run` once confirmed (for a close,
// once the event id is typed). Focus returns to `opener`.
function confirmThen(consequence, opener, run) {
  const dialog = $("confirm");
  $("confirm-title").textContent = consequence.title;
  $("confirm-text").textContent = consequence.text;
  $("confirm-go").textContent = consequence.go;
  $("confirm-typed").hidden = !consequence.typed;
  $("confirm-id").textContent = consequence.typed || "";
  const input = $("confirm-input");
  input.value = "";
  input.required = Boolean(consequence.typed);
  $("confirm-error").textContent = "";
  input.removeAttribute("aria-invalid");
  const form = $("confirm-form");
  const done = () => { dialog.close(); opener.focus(); };
  form.onsubmit = async (event) => {
    event.preventDefault();
    if (consequence.typed && input.value !== consequence.typed) {
      $("confirm-error").textContent = `Type ${consequence.typed} exactly to close it.`;
      input.setAttribute("aria-invalid", "true");
      input.focus();
      return;
    }
    done();
    try { await run(); } catch (err) { say(err.message); }
    await refreshLive();
  };
  $("confirm-cancel").onclick = done;
  dialog.showModal();
  (consequence.typed ? input : $("confirm-cancel")).focus();
}

// The form, filled from `drop` to change it, over the version it shows.
function fillForm(drop) {
  const form = $("drop-form");
  const settings = drop.room.settings || {};
  const values = { ...settings, eventId: drop.eventId, stock: drop.stock, amount: drop.amount };
  for (const field of FIELDS) {
    const input = $(`drop-${field}`);
    if (input.type === "checkbox") input.checked = Boolean(values[field]);
    else if (MOMENTS.includes(field)) input.value = toLocalInput(values[field]);
    else input.value = values[field] == null ? "" : String(values[field]);
  }
  $("drop-eventId").readOnly = true;
  $("drop-shards").readOnly = true;
  form.dataset.version = String(drop.room.version);
  $("drop-form-title").textContent = `Change ${drop.eventId} (version ${drop.room.version})`;
  $("drop-submit").textContent = "Save the changes";
  clearFieldErrors();
  showAmount();
  $("drop-name").focus();
}

function resetForm() {
  const form = $("drop-form");
  form.reset();
  delete form.dataset.version;
  $("drop-eventId").readOnly = false;
  $("drop-shards").readOnly = false;
  $("drop-form-title").textContent = "Define a drop";
  $("drop-submit").textContent = "Define the drop";
  clearFieldErrors();
  showAmount();
}

function clearFieldErrors() {
  for (const field of FIELDS) {
    $(`drop-${field}`).removeAttribute("aria-invalid");
    $(`drop-${field}-error`).textContent = "";
  }
  $("drop-form-error").textContent = "";
}

// The request the form makes: blank fields left out, numbers as typed (the route names
// the field of one that is not whole), times from the operator's zone.
function formRequest() {
  const request = {};
  for (const field of FIELDS) {
    const input = $(`drop-${field}`);
    if (input.type === "checkbox") { if (input.checked) request.gated = true; continue; }
    const value = input.value.trim();
    if (value === "") continue;
    if (NUMBERS.includes(field)) request[field] = Number(value);
    else if (MOMENTS.includes(field)) request[field] = fromLocalInput(value);
    else request[field] = value;
  }
  const version = $("drop-form").dataset.version;
  request.expectedVersion = version == null ? 0 : Number(version);
  // A drop always has a room: said even when nothing but "not gated" is set.
  if (!request.gated && request.opensAt == null && request.prequeueFrom == null) request.gated = false;
  return request;
}

// A refusal shown at the field it names, else at the form's top.
function showRefusal(err) {
  const field = err.message.split(":")[0];
  if (FIELDS.includes(field)) {
    const input = $(`drop-${field}`);
    input.setAttribute("aria-invalid", "true");
    $(`drop-${field}-error`).textContent = err.message;
    input.focus();
    return;
  }
  const stale = err.code === "STALE_VERSION";
  $("drop-form-error").textContent = stale
    ? `Refused: another operator changed this drop since this page showed version ${$("drop-form").dataset.version}. ` +
      err.message.replace(/^expectedVersion: t/, "T")
    : err.message;
  $("drop-form-error").focus();
}

function showAmount() {
  const amount = Number($("drop-amount").value);
  $("drop-amount-shown").textContent = $("drop-amount").value && Number.isFinite(amount)
    ? `Shown to buyers as ${money(amount, currency)}.` : "";
}

// The form's controls, wired once the page has loaded.
function bindDropForm() {
  $("drop-amount").addEventListener("input", showAmount);
  $("drop-reset").addEventListener("click", resetForm);
  $("drop-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    clearFieldErrors();
    const request = formRequest();
    try {
      const answer = await api("POST", "/admin/events", request);
      const version = answer.room ? answer.room.version : null;
      note(`${request.eventId}: saved${version == null ? "" : ` as version ${version}`}.`);
      resetForm();
      await refreshLive();
    } catch (err) {
      showRefusal(err);
      if (err.code === "STALE_VERSION") await refreshLive();
    }
  });
}
