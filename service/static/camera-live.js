// The live camera source: streams frames to /api/v1/stream and shows each state the server sends.
// Browsers give the camera only to secure pages (HTTPS, or localhost): ``available()`` says
// whether this page may ask for it.
"use strict";

const CameraLive = (() => {
  const MAX_WIDTH = 1280; // frames are scaled down to this width before sending
  const video = () => Camera.$("video");
  const grab = document.createElement("canvas");
  let ws = null;
  let running = false;
  let inFlight = false;
  let inFlightSince = 0;
  let timer = null;
  const stateTimes = []; // arrival times of the last states, for the readings-per-second figure

  function available() {
    return Boolean(window.isSecureContext && navigator.mediaDevices && navigator.mediaDevices.getUserMedia);
  }

  function send(message) {
    if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(message));
  }

  const source = {
    name: "live",
    correct(id, tile) { send({ type: "correct", id, tile }); },
    settingsChanged() {
      const set = Profiles.choice().profile; // the calibrated set (profiles.js), if one is chosen
      send({ type: "settings", ...Camera.settings(), ...(set ? { profile: set } : {}) });
    },
  };

  function sendFrame() {
    const now = performance.now();
    const v = video();
    // One frame in flight at a time: the server only ever reads the newest anyway, and this keeps
    // a slow phone link from filling up with frames nobody will read.
    if (!ws || ws.readyState !== WebSocket.OPEN || !v.videoWidth) return;
    if (inFlight && now - inFlightSince < 2000) return;
    const scale = Math.min(1, MAX_WIDTH / v.videoWidth);
    grab.width = Math.round(v.videoWidth * scale);
    grab.height = Math.round(v.videoHeight * scale);
    grab.getContext("2d").drawImage(v, 0, 0, grab.width, grab.height);
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
    ws.onopen = () => { Camera.message("Connected."); inFlight = false; };
    ws.onmessage = (event) => {
      const m = JSON.parse(event.data);
      if (m.type === "ready") source.settingsChanged();
      else if (m.type === "table") Camera.setToken(m.table, m.token);
      else if (m.type === "state") {
        inFlight = false;
        stateTimes.push(performance.now());
        if (stateTimes.length > 10) stateTimes.shift();
        const span = (stateTimes[stateTimes.length - 1] - stateTimes[0]) / 1000;
        const rate = stateTimes.length > 1 && span > 0 ? ((stateTimes.length - 1) / span).toFixed(1) : "–";
        Camera.show(m, `${rate} readings/s · frame ${m.frame} · received ${m.received} · dropped ${m.dropped}`);
        document.body.dataset.frames = m.frame;
      } else if (m.type === "error") {
        inFlight = false;
        Camera.serverError(m.code, m.message);
      }
    };
    ws.onclose = (event) => {
      if (!running) return;
      Camera.message(`Disconnected${event.reason ? " (" + event.reason + ")" : ""}; reconnecting…`);
      setTimeout(() => { if (running) connect(); }, 1500);
    };
  }

  // Ask for the camera and start streaming; false (and the reason shown) when there is none.
  async function start() {
    const v = video();
    if (!v.srcObject) {
      try {
        v.srcObject = await navigator.mediaDevices.getUserMedia({
          video: { facingMode: "environment", width: { ideal: 1280 } },
          audio: false,
        });
      } catch (err) {
        Camera.notice([
          `No live camera (${err.name}: ${err.message}). `,
          "Take a photo of the rack instead: the button below opens the phone's camera.",
        ]);
        return false;
      }
    }
    running = true;
    Camera.use(source, v);
    connect();
    timer = setInterval(sendFrame, 50);
    return true;
  }

  function stop() {
    running = false;
    clearInterval(timer);
    if (ws) ws.close();
    ws = null;
  }

  return { available, start, stop };
})();
