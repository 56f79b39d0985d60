// The camera page's "Set" choice and "Keep my corrections" consent: the saved per-set profiles
// (GET /api/v1/profiles) fill the select; both choices are remembered on this device.
// ``Profiles.choice()`` gives {profile, keep} to the sources (the photo source sends them to
// /api/v1/scan); camera.js re-reads when the select changes.
"use strict";

const Profiles = (() => {
  const $ = (id) => document.getElementById(id);
  const remembered = localStorage.getItem("istaka.profile") || "";

  function choice() {
    return {
      profile: $("profile") ? $("profile").value || null : null,
      keep: $("keep") ? $("keep").checked : false,
    };
  }

  function start() {
    const select = $("profile");
    const keep = $("keep");
    if (keep) {
      keep.checked = localStorage.getItem("istaka.keep") === "true";
      keep.addEventListener("change", () => localStorage.setItem("istaka.keep", String(keep.checked)));
    }
    if (!select) return;
    select.addEventListener("change", () => localStorage.setItem("istaka.profile", select.value));
    fetch("/api/v1/profiles")
      .then((r) => (r.ok ? r.json() : []))
      .then((profiles) => {
        for (const p of profiles) {
          const option = document.createElement("option");
          option.value = p.name;
          option.textContent = p.name;
          select.appendChild(option);
        }
        if (profiles.some((p) => p.name === remembered)) select.value = remembered;
      })
      .catch(() => {});
  }

  start();
  return { choice };
})();
