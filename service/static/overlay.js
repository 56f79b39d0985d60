// The OBS overlay: shows the latest state of one table and reconnects by itself.
"use strict";

(() => {
  const params = new URLSearchParams(location.search);
  const table = params.get("table") || "default";
  const status = document.getElementById("status");
  let retryMs = 500;

  function render(snapshot) {
    const state = snapshot.state;
    document.body.dataset.version = snapshot.version;
    const hand = document.getElementById("hand");
    hand.replaceChildren();
    const advice = document.getElementById("advice");
    const verdict = document.getElementById("verdict");
    if (!state) {
      advice.textContent = "";
      verdict.textContent = "";
      return;
    }
    const discard = Istaka.suggestedDiscard(state);
    hand.appendChild(Istaka.rack(state.rows, { okey: state.okey, discard }));
    advice.textContent = Istaka.adviceText(state.advice);
    verdict.textContent = Istaka.verdictText(state.verdict);
    verdict.className = "line " + Istaka.verdictClass(state.verdict);
  }

  function connect() {
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    const ws = new WebSocket(`${scheme}//${location.host}/api/v1/overlay/${encodeURIComponent(table)}`);
    ws.onopen = () => {
      retryMs = 500;
      status.textContent = "live";
      status.className = "line live";
    };
    ws.onmessage = (event) => {
      const message = JSON.parse(event.data);
      if (message.type === "state") render(message);
    };
    ws.onclose = () => {
      // The server sends the full state again on the next connection, so nothing is lost.
      status.textContent = "reconnecting…";
      status.className = "line";
      setTimeout(connect, retryMs);
      retryMs = Math.min(retryMs * 2, 5000);
    };
  }

  connect();
})();
