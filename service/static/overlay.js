// The broadcast overlay: shows the latest state of one table and reconnects by itself.
// Options (the address's query): table, scale (0.5-4), corner (tl tr bl br), theme (panel clear),
// parts (rack,indicator,advice,verdict,seen).  No correction marks: the audience sees the reading.
// "seen": the tiles the table's camera saw face up, and the copies left of the tiles the hand waits for.
"use strict";

(() => {
  const PARTS = ["rack", "indicator", "advice", "verdict", "seen"];
  const params = new URLSearchParams(location.search);
  const table = params.get("table");
  const PING_MS = 20000; // the server closes an overlay socket silent for ws_silent_seconds (60 s)
  const $ = (id) => document.getElementById(id);
  const status = $("status");
  let retryMs = 500;

  function options() {
    const scale = Math.min(4, Math.max(0.5, Number(params.get("scale")) || 1));
    const corner = ["tl", "tr", "bl", "br"].includes(params.get("corner")) ? params.get("corner") : "bl";
    const theme = params.get("theme") === "clear" ? "clear" : "panel";
    const asked = (params.get("parts") || PARTS.join(",")).split(",").map((p) => p.trim());
    const parts = PARTS.filter((p) => asked.includes(p));
    document.documentElement.style.setProperty("--scale", String(scale));
    document.body.classList.add(`corner-${corner}`, `theme-${theme}`);
    for (const part of PARTS) if (!parts.includes(part)) document.body.classList.add(`hide-${part}`);
  }

  function tileOrDash(tile) {
    if (!tile) {
      const none = document.createElement("span");
      none.className = "none";
      none.textContent = "–";
      return none;
    }
    return Istaka.face({ tile }, { plain: true });
  }

  function render(snapshot) {
    const state = snapshot.state;
    if (snapshot.version) delete document.body.dataset.gone;
    document.body.dataset.version = snapshot.version;
    const hand = $("hand");
    hand.replaceChildren();
    if (!state) {
      $("waiting").textContent = `Waiting for table “${table}”: no reading yet.`;
      for (const id of ["advice", "verdict", "indicator-source", "seen", "waits"]) $(id).textContent = "";
      $("indicator-tile").replaceChildren(tileOrDash(null));
      $("okey-tile").replaceChildren(tileOrDash(null));
      return;
    }
    $("waiting").textContent = "";
    const info = Istaka.indicatorInfo(state);
    $("indicator-tile").replaceChildren(tileOrDash(state.indicator));
    $("okey-tile").replaceChildren(tileOrDash(state.okey));
    const source = $("indicator-source");
    source.className = "note" + (info.source === "typed" ? "" : " unconfirmed");
    source.dataset.source = info.source || "none";
    if (info.source === "photo") source.textContent = "read from the camera, not confirmed";
    else if (!info.source) source.textContent = info.suggestion ? `maybe ${info.suggestion.tile}, not confirmed` : "not given";
    else source.textContent = "";
    const discard = Istaka.suggestedDiscard(state);
    hand.appendChild(Istaka.rack(state.rows, { okey: state.okey, discard, plain: true }));
    $("advice").textContent = Istaka.adviceText(state.advice, state);
    $("verdict").textContent = Istaka.verdictText(state.verdict, state);
    $("verdict").className = "line part-verdict " + Istaka.verdictClass(state.verdict);
    const camera = state.table_camera;
    $("seen").textContent = camera ? `Seen on the table (${camera.seen.length}): ${camera.seen.join(" ") || "none yet"}` : "";
    const waits = state.advice && state.advice.kind === "waits" ? state.advice.waits || [] : [];
    $("waits").textContent = waits.length ? "Copies left: " + waits.map((w) => `${w.tile} ×${w.unseen}`).join(", ") : "";
  }

  // The table no longer exists (the store lost it, or it was evicted): say so rather than show a
  // hand that is not there any more.  A table made again under this name shows up by itself.
  function gone(message) {
    render({ version: 0, state: null });
    document.body.dataset.gone = "true";
    $("waiting").textContent = `Table “${table}” is gone: ${message.message}`;
  }

  function connect() {
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    const key = params.get("key");
    const query = key ? `?key=${encodeURIComponent(key)}` : "";
    const ws = new WebSocket(`${scheme}//${location.host}/api/v1/overlay/${encodeURIComponent(table)}${query}`);
    let pinger = null;
    ws.onopen = () => {
      retryMs = 500;
      pinger = setInterval(() => ws.send('{"type":"ping"}'), PING_MS);
      status.textContent = "live";
      status.className = "line live";
    };
    ws.onmessage = (event) => {
      const message = JSON.parse(event.data);
      if (message.type === "state") render(message);
      else if (message.type === "gone") gone(message);
    };
    ws.onclose = () => {
      clearInterval(pinger);
      // The server sends the full state again on the next connection, so nothing is lost.
      status.textContent = "reconnecting…";
      status.className = "line";
      setTimeout(connect, retryMs);
      retryMs = Math.min(retryMs * 2, 5000);
    };
  }

  options();
  if (table) connect();
  else {
    $("waiting").textContent = "No table named: add ?table=NAME to this page's address.";
    status.textContent = "no table";
  }
})();
