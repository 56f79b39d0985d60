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
    if (entry.track !== undefined && entry.track !== null) el.dataset.track = entry.track;
    if (entry.corrected) el.classList.add("corrected");
    if (entry.flagged) el.classList.add("flagged");
    if (opts.okey && entry.tile === opts.okey) el.classList.add("okey");
    if (opts.discard && entry.tile === opts.discard) el.classList.add("discard");
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

  // The rack: rows of groups of tiles.
  function rack(rows, opts = {}) {
    const el = document.createElement("div");
    el.className = "rack";
    let discardLeft = opts.discard ? 1 : 0; // highlight one copy of the suggested discard only
    for (const row of rows || []) {
      const rowEl = document.createElement("div");
      rowEl.className = "rack-row";
      for (const group of row) {
        const groupEl = document.createElement("div");
        groupEl.className = "group";
        for (const entry of group) {
          const mark = discardLeft > 0 && entry.tile === opts.discard;
          if (mark) discardLeft -= 1;
          groupEl.appendChild(face(entry, { okey: opts.okey, discard: mark ? opts.discard : null }));
        }
        rowEl.appendChild(groupEl);
      }
      el.appendChild(rowEl);
    }
    return el;
  }

  // The suggested discard of a state's advice (the best-ranked candidate), or null.
  function suggestedDiscard(advice) {
    if (!advice) return null;
    if (typeof advice.discard === "string") return advice.discard;
    const ranked = advice.discards || advice.ranked || [];
    if (ranked.length && ranked[0].tile) return ranked[0].tile;
    return null;
  }

  function adviceText(advice) {
    if (!advice) return "";
    if (advice.summary) return advice.summary;
    const ranked = advice.discards || advice.ranked || [];
    if (ranked.length && ranked[0].sentence) return ranked[0].sentence;
    if (ranked.length && ranked[0].text) return ranked[0].text;
    if (advice.waits && advice.waits.length) {
      return "Waiting on " + advice.waits.map((w) => w.tile + (w.unseen !== undefined ? " (" + w.unseen + " left)" : "")).join(", ");
    }
    return "";
  }

  function verdictText(verdict) {
    if (!verdict) return "";
    if (verdict.summary) return verdict.summary;
    const valid = verdict.valid !== undefined ? verdict.valid : verdict.winning;
    if (valid) {
      let text = "Valid win";
      if (verdict.finish) text += " (" + verdict.finish.replace(/_/g, " ") + ")";
      if (verdict.points !== undefined && verdict.points !== null) text += ", " + verdict.points + " points";
      return text;
    }
    return "Not a win" + (verdict.reason ? ": " + verdict.reason : "");
  }

  function verdictClass(verdict) {
    if (!verdict) return "";
    const valid = verdict.valid !== undefined ? verdict.valid : verdict.winning;
    return valid ? "win" : "nowin";
  }

  return { face, rack, suggestedDiscard, adviceText, verdictText, verdictClass };
})();
