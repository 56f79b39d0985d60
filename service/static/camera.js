// The camera page: streams frames to /api/v1/stream, draws what the server read over the video,
// and lets the player correct a tile by tapping it.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const video = $("video");
  const boxes = $("boxes");
  const grab = document.createElement("canvas");
  const MAX_WIDTH = 1280; // frames are scaled down to this width before sending
  let ws = null;
  let inFlight = false;
  let inFlightSince = 0;
  let state = null;
  let picking = null; // the tile entry being corrected
  const stateTimes = []; // arrival times of the last states, for the readings-per-second figure

  function message(text) { $("message").textContent = text; }

  function settings() {
    const table = $("table").value.trim();
    return {
      type: "settings",
      indicator: $("indicator").value.trim() || null,
      rules: $("rules").value,
      seen: $("seen").value.trim(),
      declare: $("declare").checked,
      table: table || null,
    };
  }

  function sendSettings() {
    if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(settings()));
  }

  function allTiles(s) {
    const tiles = [];
    for (const row of s.rows || []) for (const group of row) for (const t of group) tiles.push(t);
    for (const t of s.table || []) tiles.push({ ...t, offRack: true });
    return tiles;
  }

  function drawBoxes() {
    const ctx = boxes.getContext("2d");
    const w = (boxes.width = video.clientWidth);
    const h = (boxes.height = video.clientHeight);
    ctx.clearRect(0, 0, w, h);
    if (!state || !state.image_size) return;
    const sx = w / state.image_size[0];
    const sy = h / state.image_size[1];
    const discard = Istaka.discardTarget(state.rows, Istaka.suggestedDiscard(state));
    ctx.font = "bold 15px DejaVu Sans, Arial, sans-serif";
    for (const t of allTiles(state)) {
      if (!t.box) continue;
      const [x1, y1, x2, y2] = t.box;
      let colour = t.corrected ? "#00b0ff" : t.flagged ? "#ff9100" : "#00e676";
      if (t.offRack) colour = "#bdbdbd";
      if (discard && t.id === discard.id && !t.offRack) {
        colour = "#ff1744";
        ctx.lineWidth = 4;
      } else {
        ctx.lineWidth = 2;
      }
      ctx.strokeStyle = colour;
      ctx.strokeRect(x1 * sx, y1 * sy, (x2 - x1) * sx, (y2 - y1) * sy);
      const label = t.tile + (t.corrected ? "✎" : "");
      const tw = ctx.measureText(label).width + 6;
      ctx.fillStyle = colour;
      ctx.fillRect(x1 * sx, y1 * sy - 18, tw, 18);
      ctx.fillStyle = "#000";
      ctx.fillText(label, x1 * sx + 3, y1 * sy - 4);
    }
  }

  function render() {
    const hand = $("hand");
    hand.replaceChildren();
    if (!state) return;
    const discard = Istaka.suggestedDiscard(state);
    hand.appendChild(Istaka.rack(state.rows, { okey: state.okey, discard }));
    $("advice").textContent = Istaka.adviceText(state.advice);
    $("hints").textContent = [...(state.hints || []), ...(state.warnings || [])].join(" · ");
    $("verdict").textContent = Istaka.verdictText(state.verdict);
    $("verdict").className = Istaka.verdictClass(state.verdict);
    const span = (stateTimes[stateTimes.length - 1] - stateTimes[0]) / 1000;
    const rate = stateTimes.length > 1 && span > 0 ? ((stateTimes.length - 1) / span).toFixed(1) : "–";
    $("stats").textContent =
      `${rate} readings/s · frame ${state.frame} · received ${state.received} · dropped ${state.dropped}`;
    drawBoxes();
  }

  function openPicker(entry) {
    if (entry.id === undefined || entry.id === null || entry.id === "") {
      message("This tile has no id yet; hold the camera still for a moment and tap again.");
      return;
    }
    picking = entry;
    $("picker-from").textContent = entry.tile;
    $("picker").classList.add("open");
  }

  function correct(tile) {
    if (picking && ws && ws.readyState === WebSocket.OPEN) {
      ws.send(JSON.stringify({ type: "correct", id: Number(picking.id), tile }));
      message(tile ? `Corrected ${picking.tile} to ${tile}.` : `Correction of ${picking.tile} undone.`);
    }
    picking = null;
    $("picker").classList.remove("open");
  }

  function buildPicker() {
    const grid = $("picker-tiles");
    for (const colour of "RYBK") {
      for (let n = 1; n <= 13; n += 1) {
        const el = Istaka.face({ tile: colour + n });
        el.addEventListener("click", () => correct(colour + n));
        grid.appendChild(el);
      }
    }
    const fj = Istaka.face({ tile: "FJ" });
    fj.addEventListener("click", () => correct("FJ"));
    grid.appendChild(fj);
    $("picker-undo").addEventListener("click", () => correct(null));
    $("picker-close").addEventListener("click", () => { picking = null; $("picker").classList.remove("open"); });
  }

  function tileAt(x, y) {
    if (!state || !state.image_size) return null;
    const ix = (x / video.clientWidth) * state.image_size[0];
    const iy = (y / video.clientHeight) * state.image_size[1];
    for (const t of allTiles(state)) {
      if (!t.box || t.offRack) continue;
      const [x1, y1, x2, y2] = t.box;
      if (ix >= x1 && ix <= x2 && iy >= y1 && iy <= y2) return t;
    }
    return null;
  }

  boxes.addEventListener("click", (event) => {
    const rect = boxes.getBoundingClientRect();
    const t = tileAt(event.clientX - rect.left, event.clientY - rect.top);
    if (t) openPicker(t);
  });
  $("hand").addEventListener("click", (event) => {
    const el = event.target.closest(".tile");
    if (el) openPicker({ tile: el.dataset.tile, id: el.dataset.id });
  });

  function sendFrame() {
    const now = performance.now();
    // One frame in flight at a time: the server only ever reads the newest anyway, and this keeps
    // a slow phone link from filling up with frames nobody will read.
    if (!ws || ws.readyState !== WebSocket.OPEN || !video.videoWidth) return;
    if (inFlight && now - inFlightSince < 2000) return;
    const scale = Math.min(1, MAX_WIDTH / video.videoWidth);
    grab.width = Math.round(video.videoWidth * scale);
    grab.height = Math.round(video.videoHeight * scale);
    grab.getContext("2d").drawImage(video, 0, 0, grab.width, grab.height);
    inFlight = true;
    inFlightSince = now;
    grab.toBlob((blob) => {
      if (blob && ws && ws.readyState === WebSocket.OPEN) blob.arrayBuffer().then((buf) => ws.send(buf));
    }, "image/jpeg", 0.85);
  }

  function connect() {
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    ws = new WebSocket(`${scheme}//${location.host}/api/v1/stream`);
    ws.binaryType = "arraybuffer";
    ws.onopen = () => { message("Connected."); inFlight = false; };
    ws.onmessage = (event) => {
      const m = JSON.parse(event.data);
      if (m.type === "ready") sendSettings();
      else if (m.type === "state") {
        inFlight = false;
        state = m;
        stateTimes.push(performance.now());
        if (stateTimes.length > 10) stateTimes.shift();
        render();
        // For tests and debugging: the reading the page shows, and how many states it got.
        document.body.dataset.hand = (m.hand || []).join(" ");
        document.body.dataset.frames = m.frame;
      } else if (m.type === "error") {
        inFlight = false;
        message(`${m.code}: ${m.message}`);
      }
    };
    ws.onclose = (event) => {
      message(`Disconnected${event.reason ? " (" + event.reason + ")" : ""}; reconnecting…`);
      setTimeout(connect, 1500);
    };
  }

  async function start() {
    buildPicker();
    // /camera?indicator=R4&table=home prefills the settings (handy for a phone bookmark).
    const params = new URLSearchParams(location.search);
    for (const id of ["indicator", "seen", "table"]) if (params.has(id)) $(id).value = params.get(id);
    if (params.get("declare") === "1") $("declare").checked = true;
    try {
      const rules = await (await fetch("/api/v1/rules")).json();
      $("rules").replaceChildren(...rules.presets.map((p) => new Option(p.name, p.name)));
      if (params.has("rules")) $("rules").value = params.get("rules");
    } catch (err) {
      message(`Could not load the rule presets: ${err}`);
    }
    for (const id of ["indicator", "rules", "seen", "table", "declare"]) $(id).addEventListener("change", sendSettings);
    try {
      video.srcObject = await navigator.mediaDevices.getUserMedia({
        video: { facingMode: "environment", width: { ideal: 1280 } },
        audio: false,
      });
    } catch (err) {
      message(`No camera: ${err.name}: ${err.message}`);
      return;
    }
    connect();
    setInterval(sendFrame, 50);
    window.addEventListener("resize", drawBoxes);
  }

  start();
})();
