// The camera page's core: the settings, the reading drawn over the picture and listed below it,
// the indicator and where it came from, and the tile picker for corrections.  Where the pictures
// come from is a "source": the live camera (camera-live.js) or a photo (camera-photo.js); the
// source in use gets the settings and the corrections.  camera-start.js wires them up.
"use strict";

const Camera = (() => {
  const $ = (id) => document.getElementById(id);
  let state = null;
  let surface = null; // the element the boxes are drawn over: the video or the still photo
  let source = null; // the source in use: {name, correct(id, tile), settingsChanged()}
  let picking = null; // the tile entry being corrected

  function message(text) { $("message").textContent = text; }

  // The game each rule preset plays ("classic" or "okey101", from /api/v1/rules): which of this
  // turn's fields (#turn) apply.
  let games = {};
  function setGames(newGames) { games = newGames; showTurnFields(); }
  function game() { return games[$("rules").value] || "classic"; }
  function showTurnFields() { $("turn").dataset.game = game(); }

  // The settings' fields by the name the server gives them in an error ("next_takes: ...").
  const FIELDS = {
    indicator: "indicator", rules: "rules", seen: "seen", offered: "offered", table: "table",
    profile: "profile", next_takes: "next-takes", next_discards: "next-discards",
    table_melds: "table-melds", opened: "opened",
  };

  // An error from the server: one naming a setting is shown plainly above the reading, and its
  // field marked, until the settings are sent again; any other goes in the message line.
  function serverError(code, text) {
    const field = FIELDS[(/^([a-z_]+)/.exec(text || "") || [])[1]];
    if (!field && code !== "invalid_message") { message(`${code}: ${text}`); return; }
    clearErrors();
    if (field) $(field).setAttribute("aria-invalid", "true");
    $("settings-error").textContent = text;
    $("settings-error").hidden = false;
    document.body.dataset.settingsError = text;
  }

  function clearErrors() {
    for (const id of Object.values(FIELDS)) $(id).removeAttribute("aria-invalid");
    $("settings-error").hidden = true;
    $("settings-error").textContent = "";
    delete document.body.dataset.settingsError;
  }

  // Tiles typed with commas or several spaces: "Y7, B3" -> "Y7 B3".
  const tiles = (id) => $(id).value.replace(/,/g, " ").trim().split(/\s+/).filter(Boolean).join(" ");

  // A notice above the picture: ``parts`` are strings and {code: "..."} pieces (never HTML).
  function notice(parts) {
    const el = $("notice");
    el.replaceChildren();
    if (!parts) { el.hidden = true; return; }
    for (const part of parts) {
      if (typeof part === "string") el.append(part);
      else {
        const code = document.createElement("code");
        code.textContent = part.code;
        el.append(code);
      }
    }
    el.hidden = false;
  }

  // The table's owner token: from the address (the link the table's creation gave), or sent back
  // by the server when this page's stream creates the table; writes to the table need it.
  let token = new URLSearchParams(location.search).get("token");
  // The server owner's token, when this page was opened from the owner's link or QR code: it
  // creates tables and keeps corrected tiles.
  const owner = new URLSearchParams(location.search).get("owner");

  function setToken(table, newToken) {
    token = newToken;
    const params = new URLSearchParams(location.search);
    params.set("table", table);
    params.set("token", newToken);
    history.replaceState(null, "", `${location.pathname}?${params}`);
  }

  // What keeping corrected tiles needs: the owner's token, else the table's (with its name).
  function keepCredential() {
    const table = $("table").value.trim();
    if (owner) return { token: owner, table: null };
    return table && token ? { token, table } : null;
  }

  function settings() {
    const table = $("table").value.trim();
    return {
      token: table ? token || owner : null,
      indicator: $("indicator").value.trim() || null,
      rules: $("rules").value,
      seen: $("seen").value.trim(),
      offered: $("offered").value.trim() || null,
      declare: $("declare").checked,
      table: table || null,
      ...turn(),
    };
  }

  // This turn against the table, for the game in play only (the server refuses the other's):
  // classic, the right-hand player's takes and discards; 101, the table's melds ("K4 K5 K6 |
  // R7 Y7 B7") and whether the player has opened.
  function turn() {
    if (game() === "okey101") {
      const melds = $("table-melds").value.split(/[|;\n]/).map((m) => m.replace(/,/g, " ").trim()).filter(Boolean);
      return { table_melds: melds, opened: $("opened").checked };
    }
    return { next_takes: tiles("next-takes"), next_discards: tiles("next-discards") };
  }

  function use(newSource, newSurface) {
    source = newSource;
    surface = newSurface;
    $("video").hidden = newSurface !== $("video");
    $("still").hidden = newSurface !== $("still");
    $("turn-note").hidden = newSource.name !== "photo";
    state = null;
    render("");
  }

  function allTiles(s) {
    const tiles = [];
    for (const row of s.rows || []) for (const group of row) for (const t of group) tiles.push(t);
    for (const t of s.table || []) tiles.push({ ...t, offRack: true });
    return tiles;
  }

  // A tile's outline in image pixels: its quad where the tier stage gave one (a back tier's
  // tile as far down as it shows, so it covers no tile in front), else its box.
  function outline(t) {
    if (t.quad && t.quad.length === 4) return t.quad;
    const [x1, y1, x2, y2] = t.box;
    return [[x1, y1], [x2, y1], [x2, y2], [x1, y2]];
  }

  function inside(x, y, points) {
    let hit = false;
    for (let i = 0, j = points.length - 1; i < points.length; j = i++) {
      const [xi, yi] = points[i];
      const [xj, yj] = points[j];
      if (yi > y !== yj > y && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) hit = !hit;
    }
    return hit;
  }

  function drawBoxes() {
    const boxes = $("boxes");
    const ctx = boxes.getContext("2d");
    const w = (boxes.width = surface ? surface.clientWidth : 0);
    const h = (boxes.height = surface ? surface.clientHeight : 0);
    ctx.clearRect(0, 0, w, h);
    if (!state || !state.image_size || !w) return;
    const sx = w / state.image_size[0];
    const sy = h / state.image_size[1];
    const discard = Istaka.discardTarget(state.rows, Istaka.suggestedDiscard(state));
    for (const t of allTiles(state)) {
      if (!t.box) continue;
      const [x1, , x2] = t.box;
      // Labels no wider than their tile, so neighbours' labels do not cover each other.
      const size = Math.max(8, Math.min(15, ((x2 - x1) * sx) / 2));
      ctx.font = `bold ${size}px DejaVu Sans, Arial, sans-serif`;
      let colour = t.corrected ? "#00b0ff" : t.flagged ? "#ff9100" : "#00e676";
      if (t.offRack) colour = t.role === "indicator" ? "#ffb300" : "#bdbdbd";
      ctx.lineWidth = discard && t.id === discard.id && !t.offRack ? 4 : 2;
      if (ctx.lineWidth === 4) colour = "#ff1744";
      ctx.strokeStyle = colour;
      const points = outline(t);
      ctx.beginPath();
      points.forEach(([x, y], i) => (i ? ctx.lineTo(x * sx, y * sy) : ctx.moveTo(x * sx, y * sy)));
      ctx.closePath();
      ctx.stroke();
      const label = t.tile + (t.corrected ? "✎" : "");
      const tw = ctx.measureText(label).width + 6;
      const [lx, ly] = points[0];
      ctx.fillStyle = colour;
      ctx.fillRect(lx * sx, ly * sy - size - 3, tw, size + 3);
      ctx.fillStyle = "#000";
      ctx.fillText(label, lx * sx + 3, ly * sy - 3);
    }
  }

  function renderIndicator() {
    const info = Istaka.indicatorInfo(state);
    $("indicator-text").textContent = info.text;
    $("indicator-status").className = info.source === "typed" ? "" : "unconfirmed";
    $("indicator-status").dataset.source = info.source || "none";
    const button = $("indicator-confirm");
    const offer = info.suggestion && info.suggestion.tile;
    button.hidden = !offer;
    if (offer) {
      button.textContent = `Use ${info.suggestion.tile}`;
      button.dataset.tile = info.suggestion.tile;
    }
  }

  // Show a reading (a state of the stream, or a /scan answer) with a line of figures.
  function show(newState, stats) {
    state = newState;
    render(stats);
    // For tests and debugging: the reading the page shows.
    document.body.dataset.hand = ((newState && newState.hand) || []).join(" ");
    document.body.dataset.source = source ? source.name : "";
  }

  function render(stats) {
    const hand = $("hand");
    hand.replaceChildren();
    $("stats").textContent = stats || "";
    renderIndicator();
    if (!state) {
      for (const id of ["advice", "verdict", "hints"]) $(id).textContent = "";
      drawBoxes();
      return;
    }
    const discard = Istaka.suggestedDiscard(state);
    hand.appendChild(Istaka.rack(state.rows, { okey: state.okey, discard }));
    $("advice").textContent = Istaka.adviceText(state.advice, state);
    // The indicator's own notes are in the indicator line above.
    const warnings = (state.warnings || []).filter((w) => !w.startsWith("no indicator"));
    $("hints").textContent = [...(state.hints || []), ...warnings].join(" · ");
    $("verdict").textContent = Istaka.verdictText(state.verdict, state);
    $("verdict").className = Istaka.verdictClass(state.verdict);
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
    if (picking && source) {
      source.correct(Number(picking.id), tile);
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
    if (!state || !state.image_size || !surface) return null;
    const ix = (x / surface.clientWidth) * state.image_size[0];
    const iy = (y / surface.clientHeight) * state.image_size[1];
    for (const t of allTiles(state)) {
      if (!t.box || t.offRack) continue;
      if (inside(ix, iy, outline(t))) return t;
    }
    return null;
  }

  function settingsChanged() {
    showTurnFields();
    clearErrors(); // an error, if any, comes back for the settings sent now
    if (source) source.settingsChanged();
  }

  function init() {
    buildPicker();
    $("boxes").addEventListener("click", (event) => {
      const rect = $("boxes").getBoundingClientRect();
      const t = tileAt(event.clientX - rect.left, event.clientY - rect.top);
      if (t) openPicker(t);
    });
    $("hand").addEventListener("click", (event) => {
      const el = event.target.closest(".tile");
      if (el) openPicker({ tile: el.dataset.tile, id: el.dataset.id });
    });
    // Confirming the indicator read from the photo makes it typed: the reading then counts.
    $("indicator-confirm").addEventListener("click", () => {
      $("indicator").value = $("indicator-confirm").dataset.tile;
      settingsChanged();
    });
    for (const id of ["indicator", "rules", "seen", "offered", "table", "declare", "profile", "next-takes", "next-discards", "table-melds", "opened"]) $(id).addEventListener("change", settingsChanged);
    window.addEventListener("resize", drawBoxes);
  }

  return { $, message, notice, serverError, setGames, settings, keepCredential, setToken, use, show, init, drawBoxes };
})();
