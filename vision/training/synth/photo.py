"""The light and the camera: white balance, exposure, ramps, vignetting, glare, then lens and
motion blur, phone sharpening, tone curve, saturation, sensor noise and a JPEG round trip.

>>> import numpy as np
>>> from vision.training.synth.scene import Post
>>> img = np.full((48, 64, 3), 128, np.uint8)
>>> post = Post(noise=2, blur=0, motion=0, motion_angle=0, jpeg=90)
>>> apply_post(img, post, np.random.default_rng(0)).shape
(48, 64, 3)
"""

from __future__ import annotations

import cv2
import numpy as np

from vision.training.synth.scene import Post, Scene


def apply_light(img: np.ndarray, scene: Scene, face_mask: np.ndarray) -> np.ndarray:
    """White balance, exposure, a brightness ramp, vignetting, a hand's shadow, glare on faces.

    The smooth maps are computed on a coarse grid and resized: they have no fine detail.
    """
    w, h = scene.size
    light = scene.light
    gw, gh = max(8, w // 8), max(8, h // 8)
    us = np.linspace(-1, 1, gw, dtype=np.float32)[None, :]
    vs = np.linspace(-1, 1, gh, dtype=np.float32)[:, None]
    gx, gy, gs = light.gradient
    norm = np.hypot(gx, gy) + 1e-6
    gain = (1 + gs * (us * gx + vs * gy) / norm / 2) * (1 - light.vignette * (us**2 + vs**2) / 2)
    gain = gain * light.exposure
    if light.hand_shadow is not None:
        cu, cv_, rx, ry, ang, strength = light.hand_shadow
        m = np.zeros((gh, gw), np.float32)
        axes = (max(1, int(rx * gw)), max(1, int(ry * gh)))
        cv2.ellipse(m, (int(cu * gw), int(cv_ * gh)), axes, ang, 0, 360, 1.0, -1)
        m = cv2.GaussianBlur(m, (0, 0), gw * 0.04 + 0.5)
        gain = gain * (1 - strength * m)
    gain = cv2.resize(gain.astype(np.float32), (w, h), interpolation=cv2.INTER_LINEAR)
    f = img.astype(np.float32) * (gain[..., None] * light.gains.astype(np.float32)[None, None, :])
    gu, gv, gr, gstr, elong, angle, hard = light.glare
    strength = gstr * scene.style.gloss
    if strength > 0.02:
        # an elongated highlight (a lamp or window mirrored by the glossy faces), soft or hard
        gx_, gy_ = np.meshgrid(
            np.linspace(0, w / h, max(8, w // 4), dtype=np.float32),
            np.linspace(0, 1, max(8, h // 4), dtype=np.float32),
        )
        dx, dy = gx_ - gu * w / h, gy_ - gv
        along = dx * np.cos(angle) + dy * np.sin(angle)
        across = -dx * np.sin(angle) + dy * np.cos(angle)
        d2 = (along / elong) ** 2 + across**2
        glare = np.exp(-d2 / (gr**2 * 0.25))
        if hard > 0:
            glare = np.clip((glare - hard) / (1 - hard) * 3, 0, 1)
        glare = (strength * glare).astype(np.float32)
        glare = cv2.resize(glare, (w, h), interpolation=cv2.INTER_LINEAR) * face_mask
        f += (255 - f) * glare[..., None]
    return np.clip(f, 0, 255).astype(np.uint8)


def tone(img: np.ndarray, post: Post) -> np.ndarray:
    """The camera's tone mapping: gamma, an S-curve and saturation."""
    x = np.linspace(0, 1, 256, dtype=np.float32)
    y = x**post.gamma
    y = y + post.contrast * (y - 0.5) * (1 - np.abs(2 * y - 1))  # S-curve, fixed ends
    lut = np.clip(y * 255, 0, 255).astype(np.uint8)
    img = cv2.LUT(img, lut)
    if abs(post.saturation - 1) > 0.02:
        grey = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY).astype(np.float32)[..., None]
        img = np.clip(grey + post.saturation * (img.astype(np.float32) - grey), 0, 255)
        img = img.astype(np.uint8)
    return img


def apply_post(img: np.ndarray, post: Post, rng: np.random.Generator) -> np.ndarray:
    """Lens blur, motion blur, sensor noise (fine luma, coarser chroma), JPEG round trip."""
    if post.blur > 0.2:
        img = cv2.GaussianBlur(img, (0, 0), post.blur)
    if post.motion > 1:
        k = int(post.motion) | 1
        kernel = np.zeros((k, k), np.float32)
        kernel[k // 2, :] = 1.0 / k
        rot = cv2.getRotationMatrix2D((k / 2 - 0.5, k / 2 - 0.5), post.motion_angle, 1.0)
        kernel = cv2.warpAffine(kernel, rot, (k, k))
        kernel /= max(kernel.sum(), 1e-6)
        img = cv2.filter2D(img, -1, kernel)
    if post.sharpen > 0:
        soft = cv2.GaussianBlur(img, (0, 0), 1.2)
        img = cv2.addWeighted(img, 1 + post.sharpen, soft, -post.sharpen, 0)
    img = tone(img, post)
    h, w = img.shape[:2]
    luma = rng.standard_normal((h, w), dtype=np.float32) * post.noise
    chroma = rng.standard_normal((h // 2, w // 2, 3), dtype=np.float32) * (post.noise * 0.5)
    chroma = cv2.resize(chroma, (w, h), interpolation=cv2.INTER_LINEAR)
    noisy = img.astype(np.float32) + luma[..., None] + chroma
    img = np.clip(noisy, 0, 255).astype(np.uint8)
    ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, post.jpeg])
    return cv2.imdecode(buf, cv2.IMREAD_COLOR)
