//! Groups episodic memories into themes by the cosine similarity of their embeddings: the first
//! step of distilling "this keeps happening" into one semantic memory.
//!
//! Why DBSCAN (linfa-clustering's): the number of themes in a window of memories is not known in
//! advance, and most memories belong to no theme at all. DBSCAN needs no cluster count `k`; it
//! grows a theme only where memories are dense (at least [`ClusterParams::min_points`] of them
//! above [`ClusterParams::min_cosine`] of each other) and leaves everything else as noise. Noise
//! is the right answer for a one-off event: it stays an episodic memory, unclustered, and a later
//! window can pick it up once similar events arrive. A centroid method such as k-means would
//! instead force every memory into the nearest theme and distil rules out of coincidences.
//!
//! How cosine becomes a distance: linfa has no cosine distance, so every vector is L2-normalised
//! and compared by L2 distance. For unit vectors `||a - b||² = 2 (1 - cos(a, b))`, so "cosine
//! above `min_cosine`" is exactly "distance below `sqrt(2 (1 - min_cosine))`", the DBSCAN
//! tolerance ([`ClusterParams::tolerance`]).
//!
//! Neighbour search is a linear scan ([`CommonNearestNeighbour::LinearSearch`]): with embedding
//! dimensions in the hundreds a KD-tree prunes almost nothing and only adds overhead. The cost is
//! `O(n² · dimension)`, fine for the window of episodic memories the distill job looks at (a
//! thousand 384-dimensional vectors take well under a second in a release build). It is CPU-bound
//! work: async callers should run it on a blocking thread.

use std::collections::BTreeMap;

use linfa::ParamGuard;
use linfa::traits::Transformer;
use linfa_clustering::{Dbscan, DbscanParamsError};
use linfa_nn::CommonNearestNeighbour;
use ndarray::{Array1, Array2};

/// Default [`ClusterParams::min_cosine`].
pub const DEFAULT_MIN_COSINE: f32 = 0.75;
/// Default [`ClusterParams::min_points`].
pub const DEFAULT_MIN_POINTS: usize = 3;

/// The smallest DBSCAN tolerance used. linfa needs a positive tolerance, and with
/// `min_cosine = 1` ("identical only") vectors equal up to float rounding should still match:
/// an L2 distance below 1e-3 is a cosine above 1 - 5e-7.
const MIN_TOLERANCE: f32 = 1e-3;

/// How similar memories must be, and how many of them, to form a theme.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClusterParams {
    /// Two memories are neighbours when the cosine similarity of their embeddings is above this
    /// (strictly, up to float rounding). Must be in (-1, 1]. The default 0.75 is "says the same
    /// thing in other words" for sentence embeddings: paraphrases usually score above it, while
    /// memories that merely share a topic usually score below it.
    pub min_cosine: f32,
    /// How many memories, counting itself, a memory needs within `min_cosine` to seed or grow a
    /// theme; also the smallest theme returned. At least 2. The default 3: three similar events
    /// make a rule, two may be a coincidence.
    pub min_points: usize,
}

impl Default for ClusterParams {
    fn default() -> Self {
        Self {
            min_cosine: DEFAULT_MIN_COSINE,
            min_points: DEFAULT_MIN_POINTS,
        }
    }
}

impl ClusterParams {
    /// Checks both fields against their limits, naming the field that is out of range.
    pub fn validate(&self) -> Result<(), ClusterError> {
        // Written so that NaN fails too.
        if !(self.min_cosine > -1.0 && self.min_cosine <= 1.0) {
            return Err(ClusterError::MinCosine(self.min_cosine));
        }
        if self.min_points < 2 {
            return Err(ClusterError::MinPoints(self.min_points));
        }
        Ok(())
    }

    /// The DBSCAN tolerance: the L2 distance between unit vectors whose cosine is `min_cosine`,
    /// `sqrt(2 (1 - min_cosine))`, floored at a tiny positive value for `min_cosine = 1`.
    pub fn tolerance(&self) -> f32 {
        let eps = (2.0 * (1.0 - f64::from(self.min_cosine))).sqrt() as f32;
        eps.max(MIN_TOLERANCE)
    }
}

/// The themes found, as indices into the input.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Clustering {
    /// Each theme's members, ascending, each theme at least `min_points` long; themes ordered by
    /// their smallest member.
    pub clusters: Vec<Vec<usize>>,
    /// The inputs in no theme, ascending: left as they are for a later window.
    pub noise: Vec<usize>,
}

/// Why vectors or parameters cannot be clustered; each names the offending index or field.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ClusterError {
    #[error("vector {index} has {found} dimensions, but vector {reference} has {expected}")]
    DimensionMismatch {
        index: usize,
        found: usize,
        reference: usize,
        expected: usize,
    },
    #[error("vector {index} is all zeros: it has no direction, so no cosine similarity")]
    ZeroVector { index: usize },
    #[error("vector {index} has a non-finite value (NaN or infinity) at position {position}")]
    NonFinite { index: usize, position: usize },
    #[error("the vectors have 0 dimensions: at least 1 is needed")]
    EmptyDimension,
    #[error("min_cosine must be greater than -1 and at most 1, got {0}")]
    MinCosine(f32),
    #[error("min_points must be at least 2, got {0}")]
    MinPoints(usize),
    #[error("members is empty: a medoid needs at least 1 member")]
    NoMembers,
    #[error("member {member} is out of range: there are {len} vectors")]
    MemberOutOfRange { member: usize, len: usize },
}

/// Clusters `vectors` (embeddings, any length but all the same dimension) into themes.
///
/// The result is deterministic for the same input in the same order. (DBSCAN gives a "border"
/// memory, near two themes but dense in neither, to the theme that reaches it first in input
/// order.) Empty input gives an empty clustering.
pub fn cluster(vectors: &[Vec<f32>], params: &ClusterParams) -> Result<Clustering, ClusterError> {
    params.validate()?;
    if vectors.is_empty() {
        return Ok(Clustering::default());
    }
    let units = unit_rows(vectors)?;
    let labels = dbscan_labels(&units, params)?;
    Ok(group(&labels, params.min_points))
}

/// The most central of `members` (indices into `vectors`): the one with the highest mean cosine
/// similarity to the other members. Returns that member's index into `vectors`; ties go to the
/// smallest index, and repeated members count once. Picks the representative memory of a theme,
/// e.g. for an extractive summary when no language model is at hand.
pub fn centroid_medoid(vectors: &[Vec<f32>], members: &[usize]) -> Result<usize, ClusterError> {
    let mut members = members.to_vec();
    members.sort_unstable();
    members.dedup();
    let Some(&first) = members.first() else {
        return Err(ClusterError::NoMembers);
    };
    let out_of_range = |member| ClusterError::MemberOutOfRange {
        member,
        len: vectors.len(),
    };
    let expected = vectors.get(first).ok_or(out_of_range(first))?.len();
    if expected == 0 {
        return Err(ClusterError::EmptyDimension);
    }
    let mut units = Vec::with_capacity(members.len());
    for &member in &members {
        let vector = vectors.get(member).ok_or(out_of_range(member))?;
        if vector.len() != expected {
            return Err(ClusterError::DimensionMismatch {
                index: member,
                found: vector.len(),
                reference: first,
                expected,
            });
        }
        units.push(unit(vector, member)?);
    }
    // The mean cosine of u_i to the others is (u_i · Σ u_j − 1) / (m − 1): ranking by u_i · Σ u_j
    // is the same ranking, in O(m · dimension) instead of O(m² · dimension).
    let mut sum = vec![0.0f64; expected];
    for u in &units {
        for (s, &x) in sum.iter_mut().zip(u) {
            *s += f64::from(x);
        }
    }
    let mut best = (first, f64::NEG_INFINITY);
    for (&member, u) in members.iter().zip(&units) {
        let score: f64 = u.iter().zip(&sum).map(|(&x, s)| f64::from(x) * s).sum();
        // Strictly greater: members ascend, so a tie keeps the smaller index.
        if score > best.1 {
            best = (member, score);
        }
    }
    Ok(best.0)
}

/// `vector` scaled to length 1, computed in f64.
fn unit(vector: &[f32], index: usize) -> Result<Vec<f32>, ClusterError> {
    if let Some(position) = vector.iter().position(|x| !x.is_finite()) {
        return Err(ClusterError::NonFinite { index, position });
    }
    let norm = vector
        .iter()
        .map(|&x| f64::from(x) * f64::from(x))
        .sum::<f64>()
        .sqrt();
    if norm == 0.0 {
        return Err(ClusterError::ZeroVector { index });
    }
    Ok(vector
        .iter()
        .map(|&x| (f64::from(x) / norm) as f32)
        .collect())
}

/// The vectors as the rows of a matrix, each L2-normalised; all must share vector 0's dimension.
fn unit_rows(vectors: &[Vec<f32>]) -> Result<Array2<f32>, ClusterError> {
    let expected = vectors.first().map_or(0, Vec::len);
    if expected == 0 {
        return Err(ClusterError::EmptyDimension);
    }
    let mut rows = Array2::zeros((vectors.len(), expected));
    for (index, (vector, mut row)) in vectors.iter().zip(rows.rows_mut()).enumerate() {
        if vector.len() != expected {
            return Err(ClusterError::DimensionMismatch {
                index,
                found: vector.len(),
                reference: 0,
                expected,
            });
        }
        for (cell, x) in row.iter_mut().zip(unit(vector, index)?) {
            *cell = x;
        }
    }
    Ok(rows)
}

/// linfa's DBSCAN labels: `Some(theme)` per row, `None` for noise.
fn dbscan_labels(
    units: &Array2<f32>,
    params: &ClusterParams,
) -> Result<Array1<Option<usize>>, ClusterError> {
    let dbscan = Dbscan::params(params.min_points)
        .tolerance(params.tolerance())
        .nn_algo(CommonNearestNeighbour::LinearSearch)
        .check()
        // `validate` has run and the tolerance is floored above 0, so linfa agrees; should it
        // not, name our field behind its complaint.
        .map_err(|e| match e {
            DbscanParamsError::MinPoints => ClusterError::MinPoints(params.min_points),
            DbscanParamsError::Tolerance => ClusterError::MinCosine(params.min_cosine),
        })?;
    Ok(dbscan.transform(units))
}

/// Turns labels into sorted index lists. A theme smaller than `min_points` goes to noise: linfa
/// gives a dense memory its own theme even when all its neighbours were already taken by earlier
/// themes (possible from `min_points = 4`), and a theme of one or two is no theme.
fn group(labels: &Array1<Option<usize>>, min_points: usize) -> Clustering {
    let mut by_label: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    let mut noise = Vec::new();
    for (index, label) in labels.iter().enumerate() {
        match label {
            Some(label) => by_label.entry(*label).or_default().push(index),
            None => noise.push(index),
        }
    }
    let mut clusters = Vec::new();
    for members in by_label.into_values() {
        // Indices were pushed in ascending order, so each list is already sorted.
        if members.len() >= min_points {
            clusters.push(members);
        } else {
            noise.extend(members);
        }
    }
    noise.sort_unstable();
    clusters.sort_unstable_by_key(|members| members.first().copied());
    Clustering { clusters, noise }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use rand::rngs::StdRng;
    use rand::seq::SliceRandom;
    use rand::{Rng, SeedableRng};

    use super::*;

    const DIM: usize = 384;

    /// A standard normal sample (Box–Muller; rand_distr is not a dependency).
    fn gaussian(rng: &mut StdRng) -> f64 {
        let u1: f64 = 1.0 - rng.random::<f64>(); // (0, 1]: ln stays finite
        let u2: f64 = rng.random();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }

    /// A random direction, uniform on the unit sphere.
    fn random_unit(rng: &mut StdRng, dim: usize) -> Vec<f64> {
        let v: Vec<f64> = (0..dim).map(|_| gaussian(rng)).collect();
        let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        v.into_iter().map(|x| x / norm).collect()
    }

    fn to_f32(v: &[f64]) -> Vec<f32> {
        v.iter().map(|&x| x as f32).collect()
    }

    /// A labelled synthetic set, in shuffled order. Directions share a common component, so
    /// unrelated vectors have a cosine of about 0.3 rather than 0 (real sentence embeddings are
    /// anisotropic too). Each theme is a random unit "centre" with paraphrases = centre +
    /// Gaussian noise, the noise level varying per paraphrase (pairwise cosines from about 0.92
    /// down to about 0.74, so some pairs fall below the threshold and the theme must hold
    /// together through its denser members). Noise points (label `None`) are half unrelated
    /// directions, half near misses, "same topic, different claim": a theme's centre mixed with
    /// another direction, at a cosine of about 0.74 to the centre and 0.7 to its paraphrases.
    fn synthetic(
        seed: u64,
        themes: usize,
        per_theme: usize,
        noise: usize,
    ) -> (Vec<Vec<f32>>, Vec<Option<usize>>) {
        let mut rng = StdRng::seed_from_u64(seed);
        let common = random_unit(&mut rng, DIM);
        let biased = |rng: &mut StdRng| -> Vec<f64> {
            let v: Vec<f64> = common
                .iter()
                .zip(random_unit(rng, DIM))
                .map(|(g, x)| 0.55 * g + 0.835 * x)
                .collect();
            let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
            v.into_iter().map(|x| x / norm).collect()
        };
        let centres: Vec<Vec<f64>> = (0..themes).map(|_| biased(&mut rng)).collect();
        let mut points: Vec<(Vec<f32>, Option<usize>)> = Vec::new();
        for (theme, centre) in centres.iter().enumerate() {
            for _ in 0..per_theme {
                let sigma = rng.random_range(0.015..0.030);
                let p: Vec<f64> = centre
                    .iter()
                    .map(|c| c + sigma * gaussian(&mut rng))
                    .collect();
                points.push((to_f32(&p), Some(theme)));
            }
        }
        for i in 0..noise {
            let direction = biased(&mut rng);
            let p = if i % 2 == 0 || centres.is_empty() {
                direction
            } else {
                let centre = &centres[rng.random_range(0..centres.len())];
                // centre · direction ≈ 0.3, so cos(p, centre) ≈ 0.84 / |p| ≈ 0.84 / 1.13.
                centre
                    .iter()
                    .zip(&direction)
                    .map(|(c, d)| 0.6 * c + 0.8 * d)
                    .collect()
            };
            points.push((to_f32(&p), None));
        }
        points.shuffle(&mut rng);
        points.into_iter().unzip()
    }

    /// Labels with each noise point as its own singleton (noise is not a cluster).
    fn with_singletons(labels: &[Option<usize>]) -> Vec<usize> {
        let offset = labels.iter().flatten().max().map_or(0, |m| m + 1);
        labels
            .iter()
            .enumerate()
            .map(|(i, l)| l.unwrap_or(offset + i))
            .collect()
    }

    fn predicted_labels(clustering: &Clustering, n: usize) -> Vec<Option<usize>> {
        let mut labels = vec![None; n];
        for (theme, members) in clustering.clusters.iter().enumerate() {
            for &m in members {
                labels[m] = Some(theme);
            }
        }
        labels
    }

    fn pairs(n: usize) -> f64 {
        (n * n.saturating_sub(1)) as f64 / 2.0
    }

    /// Hubert and Arabie's adjusted Rand index of two labelings of the same items.
    fn adjusted_rand_index(a: &[usize], b: &[usize]) -> f64 {
        assert_eq!(a.len(), b.len());
        let mut contingency: HashMap<(usize, usize), usize> = HashMap::new();
        let mut rows: HashMap<usize, usize> = HashMap::new();
        let mut cols: HashMap<usize, usize> = HashMap::new();
        for (&x, &y) in a.iter().zip(b) {
            *contingency.entry((x, y)).or_default() += 1;
            *rows.entry(x).or_default() += 1;
            *cols.entry(y).or_default() += 1;
        }
        let index: f64 = contingency.values().map(|&n| pairs(n)).sum();
        let sum_rows: f64 = rows.values().map(|&n| pairs(n)).sum();
        let sum_cols: f64 = cols.values().map(|&n| pairs(n)).sum();
        let expected = sum_rows * sum_cols / pairs(a.len());
        let max = (sum_rows + sum_cols) / 2.0;
        if max == expected {
            // Both all one cluster or all singletons: identical partitions (scikit-learn's rule).
            return 1.0;
        }
        (index - expected) / (max - expected)
    }

    #[test]
    fn adjusted_rand_index_sanity() {
        let a = [0, 0, 1, 1, 2, 2, 2];
        assert!((adjusted_rand_index(&a, &a) - 1.0).abs() < 1e-12);
        // Renaming clusters changes nothing.
        assert!((adjusted_rand_index(&[0, 0, 1, 1], &[1, 1, 0, 0]) - 1.0).abs() < 1e-12);
        // The worked example of scikit-learn's adjusted_rand_score: 4/7.
        let ari = adjusted_rand_index(&[0, 0, 1, 1], &[0, 0, 1, 2]);
        assert!((ari - 4.0 / 7.0).abs() < 1e-12, "{ari}");
        // One cluster against all singletons: no agreement beyond chance.
        assert!(adjusted_rand_index(&[0, 0, 0, 0], &[0, 1, 2, 3]).abs() < 1e-12);
    }

    #[test]
    fn finds_the_themes_and_leaves_noise_alone() {
        let (vectors, truth) = synthetic(7, 5, 12, 15);
        let clustering = cluster(&vectors, &ClusterParams::default()).expect("valid input");
        let predicted = predicted_labels(&clustering, vectors.len());

        let ari = adjusted_rand_index(&with_singletons(&truth), &with_singletons(&predicted));
        let noise_total = truth.iter().filter(|l| l.is_none()).count();
        let noise_kept = truth
            .iter()
            .zip(&predicted)
            .filter(|(t, p)| t.is_none() && p.is_none())
            .count();
        let noise_rate = noise_kept as f64 / noise_total as f64;
        let themed_as_noise = truth
            .iter()
            .zip(&predicted)
            .filter(|(t, p)| t.is_some() && p.is_none())
            .count();
        eprintln!(
            "synthetic set: {} themes found (5 planted), ARI {ari:.4}, noise kept as noise \
             {noise_kept}/{noise_total} ({:.0}%), themed points left as noise {themed_as_noise}",
            clustering.clusters.len(),
            noise_rate * 100.0
        );
        assert!(ari >= 0.8, "adjusted Rand index {ari}");
        assert!(
            noise_rate >= 0.8,
            "only {noise_kept}/{noise_total} noise points kept as noise"
        );
    }

    #[test]
    fn output_is_well_formed_and_deterministic() {
        let (vectors, _) = synthetic(11, 5, 12, 15);
        let first = cluster(&vectors, &ClusterParams::default()).expect("valid input");
        for _ in 0..3 {
            assert_eq!(
                cluster(&vectors, &ClusterParams::default()).expect("valid input"),
                first
            );
        }
        // Every input exactly once; lists ascending; themes ordered by their smallest member.
        let mut seen: Vec<usize> = first.clusters.iter().flatten().copied().collect();
        seen.extend(&first.noise);
        seen.sort_unstable();
        assert_eq!(seen, (0..vectors.len()).collect::<Vec<_>>());
        for members in first.clusters.iter().chain([&first.noise]) {
            assert!(members.windows(2).all(|w| w[0] < w[1]), "{members:?}");
        }
        assert!(first.clusters.windows(2).all(|w| w[0][0] < w[1][0]));
        assert!(first.clusters.iter().all(|c| c.len() >= DEFAULT_MIN_POINTS));
    }

    #[test]
    fn empty_input_is_an_empty_clustering() {
        assert_eq!(
            cluster(&[], &ClusterParams::default()),
            Ok(Clustering::default())
        );
    }

    #[test]
    fn scale_does_not_matter_only_direction() {
        // Three near-parallel vectors of very different lengths form a theme; the fourth
        // points elsewhere.
        let vectors = vec![
            vec![1.0, 0.05, 0.0],
            vec![100.0, 0.0, 0.0],
            vec![0.001, 0.0, 0.00005],
            vec![0.0, 0.0, 1.0],
        ];
        let clustering = cluster(&vectors, &ClusterParams::default()).expect("valid input");
        assert_eq!(clustering.clusters, vec![vec![0, 1, 2]]);
        assert_eq!(clustering.noise, vec![3]);
    }

    #[test]
    fn dimension_mismatch_names_the_index_and_dimensions() {
        let vectors = vec![vec![1.0, 0.0], vec![0.0, 1.0], vec![1.0, 0.0, 0.0]];
        let err = cluster(&vectors, &ClusterParams::default()).unwrap_err();
        assert_eq!(
            err,
            ClusterError::DimensionMismatch {
                index: 2,
                found: 3,
                reference: 0,
                expected: 2
            }
        );
        let message = err.to_string();
        assert!(message.contains("vector 2 has 3 dimensions"), "{message}");
        assert!(message.contains("vector 0 has 2"), "{message}");
    }

    #[test]
    fn bad_vectors_name_the_index() {
        let params = ClusterParams::default();
        let zero = vec![vec![1.0, 0.0], vec![0.0, 0.0], vec![0.0, 1.0]];
        let err = cluster(&zero, &params).unwrap_err();
        assert_eq!(err, ClusterError::ZeroVector { index: 1 });
        assert!(err.to_string().contains("vector 1 is all zeros"), "{err}");

        let nan = vec![vec![1.0, 0.0], vec![0.0, 1.0], vec![0.5, f32::NAN]];
        let err = cluster(&nan, &params).unwrap_err();
        assert_eq!(
            err,
            ClusterError::NonFinite {
                index: 2,
                position: 1
            }
        );
        assert!(err.to_string().contains("vector 2"), "{err}");

        let empty = vec![vec![], vec![]];
        assert_eq!(
            cluster(&empty, &params).unwrap_err(),
            ClusterError::EmptyDimension
        );
    }

    #[test]
    fn invalid_params_name_the_field_and_limit() {
        let vectors = vec![vec![1.0, 0.0]];
        for min_cosine in [-1.0, 1.01, f32::NAN] {
            let params = ClusterParams {
                min_cosine,
                ..ClusterParams::default()
            };
            let message = cluster(&vectors, &params).unwrap_err().to_string();
            assert!(message.contains("min_cosine"), "{message}");
            assert!(
                message.contains("greater than -1 and at most 1"),
                "{message}"
            );
        }
        for min_points in [0, 1] {
            let params = ClusterParams {
                min_points,
                ..ClusterParams::default()
            };
            let message = cluster(&vectors, &params).unwrap_err().to_string();
            assert!(
                message.contains("min_points must be at least 2"),
                "{message}"
            );
        }
        // Params are checked even when there is nothing to cluster.
        let params = ClusterParams {
            min_points: 1,
            ..ClusterParams::default()
        };
        assert_eq!(cluster(&[], &params), Err(ClusterError::MinPoints(1)));
    }

    #[test]
    fn tolerance_follows_the_cosine_threshold() {
        for min_cosine in [0.0f32, 0.5, 0.75, 0.9] {
            let params = ClusterParams {
                min_cosine,
                ..ClusterParams::default()
            };
            let expected = (2.0 * (1.0 - min_cosine)).sqrt();
            assert!((params.tolerance() - expected).abs() < 1e-6);
        }
        // min_cosine = 1 still clusters exact duplicates, and nothing else.
        let params = ClusterParams {
            min_cosine: 1.0,
            min_points: 2,
        };
        let vectors = vec![
            vec![0.6, 0.8],
            vec![1.0, 0.0],
            vec![3.0, 4.0],
            vec![1.0, 0.01],
        ];
        let clustering = cluster(&vectors, &params).expect("valid input");
        assert_eq!(clustering.clusters, vec![vec![0, 2]]);
        assert_eq!(clustering.noise, vec![1, 3]);
    }

    /// A point `phi` radians from the north pole, at azimuth `alpha`.
    fn on_sphere(phi: f64, alpha: f64) -> Vec<f32> {
        to_f32(&[phi.sin() * alpha.cos(), phi.sin() * alpha.sin(), phi.cos()])
    }

    #[test]
    fn a_theme_smaller_than_min_points_is_noise() {
        // min_points = 4, neighbours within angle theta. Three chains run away from the north
        // pole at azimuths 0°, 120°, 240° (points at 1.9, 2.35, 2.8, 3.25 theta: each a core
        // point), each with a border point at 0.95 theta (near the chain's first point and the
        // pole, nothing else). The pole itself comes last: its three neighbours are all taken by
        // then, and linfa makes it a theme of one.
        let theta: f64 = 0.1;
        let params = ClusterParams {
            min_cosine: theta.cos() as f32,
            min_points: 4,
        };
        let mut vectors = Vec::new();
        let azimuths = [
            0.0,
            2.0 * std::f64::consts::FRAC_PI_3,
            4.0 * std::f64::consts::FRAC_PI_3,
        ];
        for &alpha in &azimuths {
            for steps in [1.9, 2.35, 2.8, 3.25] {
                vectors.push(on_sphere(steps * theta, alpha));
            }
        }
        for &alpha in &azimuths {
            vectors.push(on_sphere(0.95 * theta, alpha));
        }
        vectors.push(on_sphere(0.0, 0.0));
        let pole = vectors.len() - 1;

        let labels = dbscan_labels(&unit_rows(&vectors).expect("valid"), &params).expect("valid");
        let pole_label = labels[pole].expect("linfa makes the pole a core point");
        assert_eq!(
            labels.iter().filter(|l| **l == Some(pole_label)).count(),
            1,
            "the setup should give the pole a theme of its own: {labels:?}"
        );

        let clustering = cluster(&vectors, &params).expect("valid input");
        assert_eq!(clustering.clusters.len(), 3, "{clustering:?}");
        assert_eq!(clustering.noise, vec![pole]);
    }

    #[test]
    fn medoid_picks_the_centre() {
        let at = |degrees: f64, length: f64| -> Vec<f32> {
            let r = degrees.to_radians();
            to_f32(&[length * r.cos(), length * r.sin()])
        };
        // Fan of directions 0°..80°; 40° (index 2) is the centre. Lengths differ: cosine only.
        let vectors = vec![
            at(60.0, 1.0),
            at(0.0, 2.0),
            at(40.0, 5.0),
            at(80.0, 0.5),
            at(20.0, 1.0),
        ];
        assert_eq!(centroid_medoid(&vectors, &[3, 0, 2, 4, 1]), Ok(2));
        // Only members count: among 60°, 0° and 80°, the 60° one is the most central.
        assert_eq!(centroid_medoid(&vectors, &[1, 3, 0]), Ok(0));
        // A lone member is its own medoid.
        assert_eq!(centroid_medoid(&vectors, &[4]), Ok(4));
        // Repeats count once: weighing 0° three times would make it the medoid.
        assert_eq!(centroid_medoid(&vectors, &[1, 1, 1, 0, 3]), Ok(0));
        // An exact tie goes to the smaller index.
        let square = vec![vec![0.0, 3.0], vec![2.0, 0.0]];
        assert_eq!(centroid_medoid(&square, &[1, 0]), Ok(0));
        // Errors name what is wrong.
        assert_eq!(centroid_medoid(&vectors, &[]), Err(ClusterError::NoMembers));
        assert_eq!(
            centroid_medoid(&vectors, &[0, 9]),
            Err(ClusterError::MemberOutOfRange { member: 9, len: 5 })
        );
        let mut bad = vectors.clone();
        bad[3] = vec![0.0, 0.0];
        assert_eq!(
            centroid_medoid(&bad, &[0, 3]),
            Err(ClusterError::ZeroVector { index: 3 })
        );
        bad[3] = vec![1.0, 0.0, 0.0];
        assert_eq!(
            centroid_medoid(&bad, &[0, 3]),
            Err(ClusterError::DimensionMismatch {
                index: 3,
                found: 3,
                reference: 0,
                expected: 2
            })
        );
    }
}
