// Shared by the camera page and the overlay: tile faces and the text of a verdict or advice.
"use strict";

const Istaka = (() => {
  function parts(text) {
    if (text === "FJ") return { colour: "FJ", number: "♣" };
    return { colour: text[0], number: text.slice(1) };
  }

  // A tile face element for a tile dict of a state ({"tile": "R5", "corrected": true, ...}).
  function face(entry, opts = {}) {
    const el = document.createElement("div");
    const { colour, number } = parts(entry.tile);
    el.className = "tile " + colour;
    el.dataset.tile = entry.tile;
    if (entry.id !== undefined && entry.id !== null) el.dataset.id = entry.id;
    if (entry.corrected) el.classList.add("corrected");
    if (entry.flagged) el.classList.add("flagged");
    if (opts.okey && entry.tile === opts.okey) el.classList.add("okey");
    if (opts.discard) el.classList.add("discard");
    const num = document.createElement("span");
    num.className = "num";
    num.textContent = number;
    el.appendChild(num);
    if (colour !== "FJ") {
      const mark = document.createElement("span");
      mark.className = "mark";
      el.appendChild(mark);
    }
    return el;
  }

  // The rack: rows of groups of tiles.  ``opts.discard`` is the suggested discard: a tile dict
  // with an id (that very tile is outlined) or a tile name (its last copy is outlined).
  function rack(rows, opts = {}) {
    const el = document.createElement("div");
    el.className = "rack";
    const target = discardTarget(rows, opts.discard);
    for (const row of rows || []) {
      const rowEl = document.createElement("div");
      rowEl.className = "rack-row";
      for (const group of row) {
        const groupEl = document.createElement("div");
        groupEl.className = "group";
        for (const entry of group) {
          groupEl.appendChild(face(entry, { okey: opts.okey, discard: entry === target }));
        }
        rowEl.appendChild(groupEl);
      }
      el.appendChild(rowEl);
    }
    return el;
  }

  function discardTarget(rows, discard) {
    if (!discard) return null;
    const tiles = [];
    for (const row of rows || []) for (const group of row) for (const t of group) tiles.push(t);
    if (typeof discard === "object" && discard.id !== undefined) {
      const same = tiles.find((t) => t.id === discard.id);
      if (same) return same;
    }
    const name = typeof discard === "object" ? discard.tile : discard;
    const copies = tiles.filter((t) => t.tile === name);
    return copies.length ? copies[copies.length - 1] : null;
  }

  // The suggested discard of a state: the tile the pipeline marked, else the advice's best.
  function suggestedDiscard(state) {
    if (!state) return null;
    if (state.discard) return state.discard;
    const advice = state.advice;
    if (!advice || advice.kind !== "discard" || !advice.options || !advice.options.length) return null;
    return advice.options[0].discard;
  }

  function adviceText(advice) {
    if (!advice) return "";
    if (advice.kind === "waits" && advice.waits && advice.waits.length) {
      const waits = advice.waits.slice(0, 8).map((w) => `${w.tile} (${w.unseen} left)`).join(", ");
      return `${advice.sentence || ""} Waiting on ${waits}${advice.waits.length > 8 ? ", …" : ""}`.trim();
    }
    return advice.sentence || "";
  }

  function verdictText(verdict) {
    if (!verdict) return "";
    if (verdict.sentence) return verdict.sentence;
    return verdict.valid ? "Valid win" : "Not a win" + (verdict.reason ? ": " + verdict.reason : "");
  }

  function verdictClass(verdict) {
    if (!verdict) return "";
    return verdict.valid ? "win" : "nowin";
  }

  return { face, rack, discardTarget, suggestedDiscard, adviceText, verdictText, verdictClass };
})();
