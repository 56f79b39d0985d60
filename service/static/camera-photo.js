// The photo source: a still taken with the phone's own camera app (or picked from its gallery),
// sent to POST /api/v1/scan; a correction or a new setting sends the same photo again with the
// corrections (tile ids are positions in the photo's reading, so they hold for the same photo).
// Works over plain HTTP too: a file input needs no secure page.
"use strict";

const CameraPhoto = (() => {
  const MAX_SIDE = 2048; // photos are scaled down to this before sending (a 12 MP photo is 4000)
  let photo = null; // the scaled JPEG sent
  let photoUrl = null;
  let corrections = {};
  let sending = 0; // the number of the latest request: an older answer is dropped

  const source = {
    name: "photo",
    correct(id, tile) {
      if (tile) corrections[id] = tile;
      else delete corrections[id];
      send();
    },
    settingsChanged() { send(); },
  };

  async function scaled(file) {
    const bitmap = await createImageBitmap(file, { imageOrientation: "from-image" });
    const scale = Math.min(1, MAX_SIDE / Math.max(bitmap.width, bitmap.height));
    const canvas = document.createElement("canvas");
    canvas.width = Math.round(bitmap.width * scale);
    canvas.height = Math.round(bitmap.height * scale);
    canvas.getContext("2d").drawImage(bitmap, 0, 0, canvas.width, canvas.height);
    bitmap.close();
    return new Promise((resolve) => canvas.toBlob(resolve, "image/jpeg", 0.9));
  }

  function query() {
    const s = Camera.settings();
    const params = new URLSearchParams({ rules: s.rules, declare: s.declare ? "true" : "false" });
    if (s.indicator) params.set("indicator", s.indicator);
    if (s.seen) params.set("seen", s.seen);
    if (Object.keys(corrections).length) params.set("corrections", JSON.stringify(corrections));
    const set = Profiles.choice(); // the calibrated set and the consent to keep (profiles.js)
    if (set.profile) params.set("profile", set.profile);
    const credential = Camera.keepCredential();
    if (set.keep && credential && Object.keys(corrections).length) {
      params.set("keep", "true");
      if (credential.table) params.set("table", credential.table);
    }
    return params;
  }

  function auth() {
    const credential = Camera.keepCredential();
    return credential ? { authorization: `Bearer ${credential.token}` } : {};
  }

  async function send() {
    if (!photo) return;
    const number = ++sending;
    const body = new FormData();
    body.append("image", photo, "rack.jpg");
    Camera.message("Reading the photo…");
    let answer;
    try {
      const response = await fetch(`/api/v1/scan?${query()}`, { method: "POST", body, headers: auth() });
      answer = await response.json();
      if (!response.ok) {
        if (number === sending) {
          Camera.show(null, "");
          if (answer.error) Camera.serverError(answer.error.code, answer.error.message);
          else Camera.message(`error ${response.status}`);
        }
        return;
      }
    } catch (err) {
      if (number === sending) Camera.message(`Could not send the photo: ${err}`);
      return;
    }
    if (number !== sending) return;
    Camera.message("");
    const ms = answer.timings_ms && answer.timings_ms.total;
    Camera.show(answer, `photo ${answer.image_size[0]}×${answer.image_size[1]}` + (ms ? ` · read in ${Math.round(ms)} ms` : ""));
    document.body.dataset.photos = Number(document.body.dataset.photos || 0) + 1;
  }

  // Read a new photo: show it, send it, keep it for corrections.
  async function start(file) {
    const still = Camera.$("still");
    photo = await scaled(file);
    corrections = {};
    if (photoUrl) URL.revokeObjectURL(photoUrl);
    photoUrl = URL.createObjectURL(photo);
    await new Promise((resolve) => { still.onload = resolve; still.src = photoUrl; });
    Camera.use(source, still);
    await send();
  }

  return { start };
})();
