// The calibration page: sends one or two photos of the layout to POST /api/v1/calibrate (first
// learn=false: what was understood is shown, nothing learned), then, when the player agrees, the
// same photos with learn=true (and keep=true with their consent).  Lists and deletes the saved
// profiles (GET /api/v1/profiles, DELETE /api/v1/profiles/NAME).
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  // The server owner's token, carried by the address of the owner's link: learning, keeping and
  // deleting need it.
  const owner = new URLSearchParams(location.search).get("owner");
  const auth = owner ? { authorization: `Bearer ${owner}` } : {};
  let ready = null; // the FormData of the photos last read

  function message(text) { $("message").textContent = text; }

  function photosForm() {
    const body = new FormData();
    body.append("image", $("photo1").files[0]);
    if ($("photo2").files.length) body.append("image2", $("photo2").files[0]);
    return body;
  }

  async function post(learn) {
    const params = new URLSearchParams({ profile: $("name").value.trim(), learn: String(learn) });
    if (learn && $("keep").checked) params.set("keep", "true");
    const response = await fetch(`/api/v1/calibrate?${params}`, { method: "POST", body: ready, headers: auth });
    const answer = await response.json();
    if (!response.ok) throw new Error(answer.error ? answer.error.message : `error ${response.status}`);
    return answer;
  }

  function show(answer) {
    const box = $("photos");
    box.textContent = "";
    for (const photo of answer.photos) {
      const title = document.createElement("p");
      title.textContent = `${photo.name}: ${photo.found} tiles found, ${photo.labelled} labelled from the layout`;
      const rows = document.createElement("pre");
      rows.textContent = photo.summary;
      box.append(title, rows);
      const otherwise = photo.tiles.filter((t) => t.label && t.label !== t.read);
      if (otherwise.length) {
        const p = document.createElement("p");
        p.className = "read-otherwise";
        p.textContent = "Read otherwise by the shipped model (the layout's label will be learned): " +
          otherwise.map((t) => `${t.label} read as ${t.read}`).join(", ");
        box.appendChild(p);
      }
      for (const problem of photo.problems) {
        const p = document.createElement("p");
        p.className = "problem";
        p.textContent = problem;
        box.appendChild(p);
      }
    }
    $("understood").hidden = false;
  }

  $("form").addEventListener("submit", async (event) => {
    event.preventDefault();
    ready = photosForm();
    $("understood").hidden = true;
    message("Reading the photos…");
    try {
      show(await post(false));
      message("Check the rows above; if they are right, learn your set.");
    } catch (err) {
      message(String(err.message || err));
    }
  });

  $("read").disabled = false; // the form is handled from here on (disabled in the page until now)

  $("learn").addEventListener("click", async () => {
    if (!ready) return;
    message("Learning your set (about a minute)…");
    $("learn").disabled = true;
    try {
      const answer = await post(true);
      const r = answer.report;
      message(`Saved "${answer.profile}": ${r.tiles} tiles, ${Math.round(r.seconds)} s; its own photos read ` +
        `${(100 * r.shipped_identity).toFixed(1)} % by the shipped model, ${(100 * r.profile_identity).toFixed(1)} % by the profile. ` +
        "Choose it under Set on the camera page.");
      document.body.dataset.learned = answer.profile;
      listProfiles();
    } catch (err) {
      message(String(err.message || err));
    } finally {
      $("learn").disabled = false;
    }
  });

  async function listProfiles() {
    const list = $("profiles");
    list.textContent = "";
    const response = await fetch("/api/v1/profiles");
    const profiles = response.ok ? await response.json() : [];
    if (!profiles.length) list.textContent = "none yet";
    for (const p of profiles) {
      const item = document.createElement("li");
      item.textContent = `${p.name} (${p.tiles} tiles, ${p.created || ""})`;
      const remove = document.createElement("button");
      remove.textContent = "Delete";
      remove.addEventListener("click", async () => {
        await fetch(`/api/v1/profiles/${encodeURIComponent(p.name)}`, { method: "DELETE", headers: auth });
        listProfiles();
      });
      item.appendChild(remove);
      list.appendChild(item);
    }
  }

  listProfiles();
})();
