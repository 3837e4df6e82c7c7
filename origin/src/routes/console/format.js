"use strict";
// Money and time as the operator reads them: an amount in its currency (the API's
// amounts are in the currency's minor unit: KRW has none, USD cents), a time in the
// operator's time zone — the browser's — with the zone named.

const ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone;

// "₩5,000" for 5000 KRW; "$50.00" for 5000 USD.
function money(amount, currency) {
  if (amount == null || !currency) return amount == null ? "—" : String(amount);
  const format = new Intl.NumberFormat(undefined, { style: "currency", currency });
  const digits = format.resolvedOptions().maximumFractionDigits;
  return format.format(amount / 10 ** digits);
}

const MOMENT = new Intl.DateTimeFormat(undefined, {
  year: "numeric", month: "short", day: "numeric",
  hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23",
  timeZoneName: "short",
});
const CLOCK = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit", hourCycle: "h23" });

// "Dec 4, 2026, 18:32:05 GMT+9".
function moment(ms) {
  return ms == null ? "—" : MOMENT.format(new Date(ms));
}

// "18:32", for a chart's axis.
function clock(ms) {
  return CLOCK.format(new Date(ms));
}

// The zone's name and its short form now: "Asia/Seoul (GMT+9)".
function zoneLabel() {
  const short = MOMENT.formatToParts(new Date()).find((part) => part.type === "timeZoneName");
  return short ? `${ZONE} (${short.value})` : ZONE;
}

// A `datetime-local` input's value for `ms`, in the operator's zone, and back.
function toLocalInput(ms) {
  if (ms == null) return "";
  const date = new Date(ms);
  const pad = (n) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}` +
    `T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

function fromLocalInput(value) {
  return value ? new Date(value).getTime() : null;
}

// A count, grouped as the operator's locale does ("12,345").
function count(n) {
  return n == null ? "—" : new Intl.NumberFormat().format(n);
}
