// The camera page's start: settings from the address, the rule presets, then the live camera
// where the browser allows it, else the photo fallback with the reason said plainly.
"use strict";

(async () => {
  const $ = Camera.$;
  Camera.init();
  // /camera?indicator=R4&table=home prefills the settings (handy for a phone bookmark).
  const params = new URLSearchParams(location.search);
  for (const id of ["indicator", "seen", "table", "offered"]) if (params.has(id)) $(id).value = params.get(id);
  // This turn's table: next_takes=Y7+B3, next_discards=..., table_melds=K4 K5 K6|R7 Y7 B7, opened=1
  for (const name of ["next_takes", "next_discards", "table_melds"]) {
    if (params.has(name)) $(name.replace("_", "-")).value = params.get(name);
  }
  if (params.get("declare") === "1") $("declare").checked = true;
  if (params.get("opened") === "1") $("opened").checked = true;
  try {
    const rules = await (await fetch("/api/v1/rules")).json();
    $("rules").replaceChildren(...rules.presets.map((p) => new Option(p.name, p.name)));
    if (params.has("rules")) $("rules").value = params.get("rules");
    Camera.setGames(Object.fromEntries(rules.presets.map((p) => [p.name, p.rules.game])));
  } catch (err) {
    Camera.message(`Could not load the rule presets: ${err}`);
  }

  $("photo").addEventListener("change", async () => {
    const file = $("photo").files[0];
    if (!file) return;
    CameraLive.stop();
    $("live-button").hidden = !CameraLive.available();
    await CameraPhoto.start(file);
    $("photo").value = ""; // the same photo may be taken again
  });
  $("live-button").addEventListener("click", async () => {
    if (await CameraLive.start()) $("live-button").hidden = true;
  });

  if (!CameraLive.available()) {
    const https = `https://${location.hostname}${location.port ? ":" + location.port : ""}/camera`;
    Camera.notice([
      `The live camera needs a secure page: this one came over plain HTTP from ${location.host}, `,
      "and browsers give the camera only to HTTPS pages (or to localhost). ",
      "Take a photo of the rack instead: the button below opens the phone's camera. ",
      "For the live camera, start the server with ",
      { code: "istaka serve --https" },
      " and open ",
      { code: https },
      ".",
    ]);
    document.body.dataset.mode = "photo";
    return;
  }
  document.body.dataset.mode = (await CameraLive.start()) ? "live" : "photo";
})();
