// Shared by the camera page and the overlay: tile faces, the indicator and where it came from,
// and the text of a verdict or advice.
"use strict";

const Istaka = (() => {
  function parts(text) {
    if (text === "FJ") return { colour: "FJ", number: "♣" };
    return { colour: text[0], number: text.slice(1) };
  }

  // A tile face element for a tile dict of a state ({"tile": "R5", "corrected": true, ...}).
  // ``opts.plain``: no correction or uncertainty marks (the broadcast overlay).
  function face(entry, opts = {}) {
    const el = document.createElement("div");
    const { colour, number } = parts(entry.tile);
    el.className = "tile " + colour;
    el.dataset.tile = entry.tile;
    if (entry.id !== undefined && entry.id !== null) el.dataset.id = entry.id;
    if (entry.corrected && !opts.plain) el.classList.add("corrected");
    if (entry.flagged && !opts.plain) el.classList.add("flagged");
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
          groupEl.appendChild(
            face(entry, { okey: opts.okey, discard: entry === target, plain: opts.plain }),
          );
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

  function adviceText(advice, state) {
    if (!advice) return "";
    let text = advice.sentence || "";
    // Take the offered discard or draw (okey.take_or_draw): the turn's first answer, so first.
    if (state && state.take_or_draw) text = `${state.take_or_draw.sentence} ${text}`;
    if (advice.kind === "waits" && advice.waits && advice.waits.length) {
      const waits = advice.waits.slice(0, 8).map((w) => `${w.tile} (${w.unseen} left)`).join(", ");
      text = `${text} Waiting on ${waits}${advice.waits.length > 8 ? ", …" : ""}`.trim();
    }
    if (advice.distance === 0 && state && state.indicator_source === "photo") {
      text += ` (if the indicator is ${state.indicator}: read from the photo, not confirmed)`;
    }
    return text;
  }

  // The indicator in use and where it came from: {tile, source, text, suggestion}.  ``source`` is
  // "typed", "photo" (read from the picture, not confirmed) or null (none; maybe a suggestion).
  function indicatorInfo(state) {
    if (!state) return { tile: null, source: null, text: "", suggestion: null };
    const pct = (c) => `${Math.round(c * 100)}%`;
    const suggestion = state.indicator_suggestion || null;
    if (!state.indicator) {
      const text = suggestion
        ? `No indicator: the tile off the rack may be ${suggestion.tile} ` +
          `(${pct(suggestion.confidence)}, too unsure to use). Confirm it or type the indicator.`
        : "No indicator: type it for a verdict and advice.";
      return { tile: null, source: null, text, suggestion };
    }
    const okey = state.okey ? `, okey ${state.okey}` : "";
    if (state.indicator_source === "photo") {
      const sure = state.indicator_confidence != null ? `, ${pct(state.indicator_confidence)}` : "";
      return {
        tile: state.indicator,
        source: "photo",
        text: `Indicator ${state.indicator} (read from the photo${sure}, not confirmed)${okey}`,
        suggestion: { tile: state.indicator, confidence: state.indicator_confidence },
      };
    }
    return { tile: state.indicator, source: "typed", text: `Indicator ${state.indicator} (typed)${okey}`, suggestion: null };
  }

  function verdictText(verdict, state) {
    if (!verdict) return "";
    let text = verdict.sentence || (verdict.valid ? "Valid win" : "Not a win" + (verdict.reason ? ": " + verdict.reason : ""));
    if (verdict.valid && state && state.indicator_source === "photo") {
      text += ` Only if the indicator is ${state.indicator}: read from the photo, not confirmed.`;
    }
    return text;
  }

  function verdictClass(verdict) {
    if (!verdict) return "";
    return verdict.valid ? "win" : "nowin";
  }

  return {
    face, rack, discardTarget, suggestedDiscard, adviceText, indicatorInfo, verdictText, verdictClass,
  };
})();
