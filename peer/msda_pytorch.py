"""ms_deform_attn as Deformable DETR and mmcv write it in plain PyTorch (their CPU fallback
and test oracle): each level's slice of `value` is viewed as an image per (batch, head),
sampled with F.grid_sample(mode="bilinear", padding_mode="zeros", align_corners=False) at the
grid 2 * location - 1, and the samples of every level and point are weighted by the
attention weights and summed. Autograd gives the three gradients.

Shapes (oplab's case, SPEC section 13): value [N, S, M, Dh], spatial_shapes [L, 2] (H, W),
sampling_locations [N, Lq, M, L, P, 2] (x, y), attention_weights [N, Lq, M, L, P];
output [N, Lq, M * Dh]. level_start_index is not read: the levels are consecutive slices.
"""
import torch
import torch.nn.functional as F


def ms_deform_attn(value, spatial_shapes, sampling_locations, attention_weights):
    n, _, m, dh = value.shape
    lq, levels, points = sampling_locations.shape[1], sampling_locations.shape[3], sampling_locations.shape[4]
    sizes = [(int(h), int(w)) for h, w in spatial_shapes.tolist()]
    # grid_sample's normalised grid: -1 and 1 are the outer edges of the map (align_corners=False).
    grid = 2 * sampling_locations - 1
    out = value.new_zeros(n * m, dh, lq)
    row = 0
    for level, (h, w) in enumerate(sizes):
        # [N, H*W, M, Dh] -> [N*M, Dh, H, W]: one image per batch and head.
        image = value[:, row:row + h * w].permute(0, 2, 3, 1).reshape(n * m, dh, h, w)
        row += h * w
        # [N, Lq, M, P, 2] -> [N*M, Lq, P, 2]: queries as rows, points as columns.
        g = grid[:, :, :, level].permute(0, 2, 1, 3, 4).reshape(n * m, lq, points, 2)
        sampled = F.grid_sample(image, g, mode="bilinear", padding_mode="zeros", align_corners=False)
        # [N*M, Dh, Lq, P] weighted by [N*M, 1, Lq, P], summed over the points.
        weight = attention_weights[:, :, :, level].permute(0, 2, 1, 3).reshape(n * m, 1, lq, points)
        out = out + (sampled * weight).sum(-1)
    # [N*M, Dh, Lq] -> [N, Lq, M*Dh]
    return out.reshape(n, m, dh, lq).permute(0, 3, 1, 2).reshape(n, lq, m * dh)
