"""Pinhole camera and the drawing of textured or flat quads and boxes into an image.

World frame (centimetres): x along the rack to the right, y away from the player, z up; the table
is z = 0.  Camera frame follows OpenCV: x right, y down, z forward.

>>> cam = look_at(np.array([0.0, -50.0, 30.0]), np.array([0.0, 0.0, 5.0]), 60.0, (640, 480))
>>> uv, z = cam.project(np.array([[0.0, 0.0, 5.0]]))
>>> [round(float(v)) for v in uv[0]]
[320, 240]
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

Colour = tuple[int, int, int]


@dataclass(frozen=True)
class Camera:
    K: np.ndarray  # 3x3 intrinsics
    R: np.ndarray  # 3x3 world -> camera rotation
    C: np.ndarray  # camera centre in world coordinates
    size: tuple[int, int]  # (width, height)

    def project(self, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Image coordinates (N, 2) and depths (N,) of world points (N, 3)."""
        cam = (points - self.C) @ self.R.T
        z = cam[:, 2]
        safe = np.where(np.abs(z) < 1e-6, 1e-6, z)
        uvw = cam @ self.K.T
        return uvw[:, :2] / safe[:, None], z

    def plane_homography(self) -> np.ndarray:
        """Homography from table coordinates (x, y, 1) on z = 0 to image pixels."""
        t = -self.R @ self.C
        m = np.column_stack([self.R[:, 0], self.R[:, 1], t])
        return self.K @ m

    def ray_z(self) -> np.ndarray:
        """Coefficients (a, b, c): the world z of the ray through pixel (u, v) is a*u + b*v + c."""
        return (self.R.T @ np.linalg.inv(self.K))[2]


def look_at(
    eye: np.ndarray,
    target: np.ndarray,
    hfov_deg: float,
    size: tuple[int, int],
    roll_deg: float = 0.0,
    principal_offset: tuple[float, float] = (0.0, 0.0),
) -> Camera:
    """A camera at ``eye`` looking at ``target`` with horizontal field of view ``hfov_deg``."""
    w, h = size
    forward = target - eye
    forward = forward / np.linalg.norm(forward)
    right = np.cross(forward, np.array([0.0, 0.0, 1.0]))
    right = right / np.linalg.norm(right)
    down = np.cross(forward, right)
    R = np.stack([right, down, forward])
    roll = np.deg2rad(roll_deg)
    cr, sr = np.cos(roll), np.sin(roll)
    R = np.array([[cr, -sr, 0.0], [sr, cr, 0.0], [0.0, 0.0, 1.0]]) @ R
    f = (w / 2) / np.tan(np.deg2rad(hfov_deg) / 2)
    cx = w / 2 + principal_offset[0]
    cy = h / 2 + principal_offset[1]
    K = np.array([[f, 0.0, cx], [0.0, f, cy], [0.0, 0.0, 1.0]])
    return Camera(K=K, R=R, C=np.asarray(eye, float), size=size)


def quad_area(quad: np.ndarray) -> float:
    """Unsigned area of a polygon (N, 2)."""
    x, y = quad[:, 0], quad[:, 1]
    return float(abs(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))) / 2)


def _roi(quad: np.ndarray, size: tuple[int, int]) -> tuple[int, int, int, int] | None:
    w, h = size
    x0 = max(0, int(np.floor(quad[:, 0].min())) - 1)
    y0 = max(0, int(np.floor(quad[:, 1].min())) - 1)
    x1 = min(w, int(np.ceil(quad[:, 0].max())) + 2)
    y1 = min(h, int(np.ceil(quad[:, 1].max())) + 2)
    if x1 <= x0 or y1 <= y0:
        return None
    return x0, y0, x1, y1


def polygon_mask(quad: np.ndarray, roi: tuple[int, int, int, int]) -> np.ndarray:
    """Anti-aliased float mask of a simple polygon inside ``roi`` (x0, y0, x1, y1)."""
    x0, y0, x1, y1 = roi
    shift = 4  # sub-pixel precision for the anti-aliased edge
    m = np.zeros((y1 - y0, x1 - x0), np.uint8)
    pts = np.round((quad - [x0, y0]) * (1 << shift)).astype(np.int32)
    cv2.fillPoly(m, [pts], 255, cv2.LINE_AA, shift)  # sides of rounded tiles are not convex
    return m.astype(np.float32) / 255.0


def paste_texture(
    canvas: np.ndarray,
    texture: np.ndarray,
    quad: np.ndarray,
    shade: float | np.ndarray = 1.0,
) -> tuple[tuple[int, int, int, int], np.ndarray] | None:
    """Warp ``texture`` (BGR or BGRA) onto the image quad (TL, TR, BR, BL order of the texture).

    Returns the region and the coverage mask written, or None when the quad is outside.
    """
    h_img, w_img = canvas.shape[:2]
    roi = _roi(quad, (w_img, h_img))
    if roi is None:
        return None
    x0, y0, x1, y1 = roi
    th, tw = texture.shape[:2]
    src = np.array([[0, 0], [tw, 0], [tw, th], [0, th]], np.float32)
    dst = (quad - [x0, y0]).astype(np.float32)
    H = cv2.getPerspectiveTransform(src, dst)
    warped = cv2.warpPerspective(
        texture, H, (x1 - x0, y1 - y0), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
    )
    mask = polygon_mask(quad, roi)
    if texture.shape[2] == 4:
        # the polygon bounds the face; the alpha inside it rounds the corners
        mask = mask * (warped[..., 3].astype(np.float32) / 255.0)
        warped = warped[..., :3]
    if not np.isscalar(shade) or shade != 1.0:
        warped = cv2.convertScaleAbs(warped, alpha=float(shade))
    blend(canvas, warped, mask, roi)
    return roi, mask


def blend(
    canvas: np.ndarray, layer: np.ndarray, mask: np.ndarray, roi: tuple[int, int, int, int]
) -> None:
    """canvas[roi] = layer * mask + canvas[roi] * (1 - mask), in place (OpenCV's fast blend)."""
    x0, y0, x1, y1 = roi
    region = canvas[y0:y1, x0:x1]
    canvas[y0:y1, x0:x1] = cv2.blendLinear(layer, region, mask, 1.0 - mask)


def fill_quad(
    canvas: np.ndarray, quad: np.ndarray, colour: Colour | np.ndarray
) -> tuple[tuple[int, int, int, int], np.ndarray] | None:
    """Fill an image polygon with a flat colour, anti-aliased."""
    h_img, w_img = canvas.shape[:2]
    roi = _roi(quad, (w_img, h_img))
    if roi is None:
        return None
    x0, y0, x1, y1 = roi
    mask = polygon_mask(quad, roi)
    layer = np.empty((y1 - y0, x1 - x0, 3), np.uint8)
    layer[:] = np.clip(np.asarray(colour, np.float32), 0, 255).astype(np.uint8)
    blend(canvas, layer, mask, roi)
    return roi, mask


@dataclass(frozen=True)
class Cuboid:
    """A box: corner ``origin`` and edges ``a`` (width), ``b`` (height), ``c`` (towards the viewer).

    ``a x b`` points along ``c``; the *front* face is the one at ``origin + c``.
    """

    origin: np.ndarray
    a: np.ndarray
    b: np.ndarray
    c: np.ndarray

    def corners(self) -> tuple[np.ndarray, np.ndarray]:
        o, a, b, c = self.origin, self.a, self.b, self.c
        back = np.array([o, o + a, o + a + b, o + b])  # BL, BR, TR, TL
        return back + c, back

    def faces(self) -> list[tuple[str, np.ndarray, np.ndarray]]:
        """(name, corners (4, 3) counter-clockwise seen from outside, outward normal)."""
        f, k = self.corners()
        out = [("front", f, self.c), ("back", k[[0, 3, 2, 1]], -self.c)]
        names = ("bottom", "right", "top", "left")
        normals = (-self.b, self.a, self.b, -self.a)
        for i, (name, nrm) in enumerate(zip(names, normals, strict=True)):
            j = (i + 1) % 4
            out.append((name, np.array([f[i], k[i], k[j], f[j]]), nrm))
        return out


def visible(face: np.ndarray, normal: np.ndarray, camera: Camera) -> bool:
    """Back-face test: the face's outward normal points towards the camera."""
    return float(np.dot(normal, camera.C - face.mean(axis=0))) > 0
