extension StarterCatalog {
    /// The text of `catalog/usda-starter.csv`; a test keeps the two identical.
    public static let text = #"""
        Symbol,Scientific Name,Common Name,Growth Habit,Moisture Use,Shade Tolerance,"Temperature, Minimum (°F)"
        ACMI2,Achillea millefolium,common yarrow,Forb/herb,Low,Intolerant,-38
        ACRU,Acer rubrum,red maple,Tree,High,Tolerant,-38
        ACSA3,Acer saccharum,sugar maple,Tree,Medium,Tolerant,-38
        AGAM,Agave americana,American century plant,Shrub,Low,Intolerant,13
        AGFO,Agastache foeniculum,blue giant hyssop,Forb/herb,Medium,Intermediate,-38
        ALVE2,Aloe vera,Barbados aloe,Forb/herb,Low,Intolerant,32
        AMCA4,Amelanchier canadensis,Canadian serviceberry,Shrub,High,Tolerant,-28
        AMLA,Amelanchier laevis,Allegheny serviceberry,Tree,Medium,Tolerant,-33
        AQCA,Aquilegia canadensis,red columbine,Forb/herb,Medium,Tolerant,-38
        ARUV,Arctostaphylos uva-ursi,kinnikinnick,Subshrub,Low,Intolerant,-47
        ASIN,Asclepias incarnata,swamp milkweed,Forb/herb,High,Intolerant,-38
        ASTU,Asclepias tuberosa,butterfly milkweed,Forb/herb,Low,Intolerant,-33
        BAAU,Baptisia australis,blue wild indigo,Forb/herb,Low,Intermediate,-28
        BEPA,Betula papyrifera,paper birch,Tree,Medium,Intolerant,-62
        BOGL,Bougainvillea glabra,paperflower,Vine,Low,Intolerant,28
        CAAM2,Callicarpa americana,American beautyberry,Shrub,Medium,Intermediate,3
        CAAN4,Capsicum annuum,cayenne pepper,Forb/herb,Medium,Intolerant,33
        CECA4,Cercis canadensis,eastern redbud,Tree,Medium,Tolerant,-23
        CISI3,Citrus sinensis,sweet orange,Tree,Medium,Intermediate,28
        CLAL3,Clethra alnifolia,coastal sweetpepperbush,Shrub,High,Tolerant,-23
        COAR2,Coffea arabica,Arabian coffee,Shrub,Medium,Tolerant,32
        COFL2,Cornus florida,flowering dogwood,Tree,Medium,Tolerant,-23
        COLA5,Coreopsis lanceolata,lanceleaf tickseed,Forb/herb,Low,Intolerant,-28
        COSE16,Cornus sericea,redosier dogwood,Shrub,High,Intermediate,-47
        ECPU,Echinacea purpurea,eastern purple coneflower,Forb/herb,Medium,Intermediate,-33
        ERYU,Eryngium yuccifolium,button eryngo,Forb/herb,Medium,Intolerant,-28
        FICA,Ficus carica,edible fig,Tree,Medium,Intermediate,7
        FRVI,Fragaria virginiana,Virginia strawberry,Forb/herb,Medium,Intermediate,-43
        GAAR,Gaillardia aristata,common gaillardia,Forb/herb,Low,Intolerant,-38
        GIBI2,Ginkgo biloba,maidenhair tree,Tree,Medium,Intermediate,-23
        HAVI4,Hamamelis virginiana,American witchhazel,Shrub,Medium,Tolerant,-33
        HEAN3,Helianthus annuus,common sunflower,Forb/herb,Medium,Intolerant,-33
        HEHE,Hedera helix,English ivy,Vine,Medium,Tolerant,-13
        HIRO3,Hibiscus rosa-sinensis,shoeblackplant,Shrub,Medium,Intermediate,32
        HYAR,Hydrangea arborescens,wild hydrangea,Shrub,Medium,Tolerant,-28
        HYQU,Hydrangea quercifolia,oakleaf hydrangea,Shrub,Medium,Tolerant,-8
        ILOP,Ilex opaca,American holly,Tree,Medium,Tolerant,-13
        ILVE,Ilex verticillata,common winterberry,Shrub,High,Tolerant,-38
        IRVE2,Iris versicolor,harlequin blueflag,Forb/herb,High,Intermediate,-38
        ITVI,Itea virginica,Virginia sweetspire,Shrub,High,Tolerant,-13
        JUVI,Juniperus virginiana,eastern redcedar,Tree,Low,Intolerant,-43
        KALA,Kalmia latifolia,mountain laurel,Shrub,Medium,Tolerant,-23
        LAAN4,Lavandula angustifolia,English lavender,Subshrub,Low,Intolerant,-13
        LIBE3,Lindera benzoin,northern spicebush,Shrub,Medium,Tolerant,-33
        LISP,Liatris spicata,dense blazing star,Forb/herb,Medium,Intolerant,-33
        LITU,Liriodendron tulipifera,tuliptree,Tree,Medium,Intermediate,-23
        LOCA2,Lobelia cardinalis,cardinalflower,Forb/herb,High,Intermediate,-33
        LOSE,Lonicera sempervirens,trumpet honeysuckle,Vine,Medium,Intermediate,-23
        MAGR4,Magnolia grandiflora,southern magnolia,Tree,Medium,Tolerant,7
        MAIN3,Mangifera indica,mango,Tree,Medium,Intolerant,32
        MAVI2,Magnolia virginiana,sweetbay,Tree,High,Tolerant,-8
        MODI,Monarda didyma,scarlet beebalm,Forb/herb,High,Intermediate,-33
        MOFI,Monarda fistulosa,wild bergamot,Forb/herb,Medium,Intermediate,-38
        MUAC,Musa acuminata,edible banana,Forb/herb,High,Intermediate,32
        NEEX,Nephrolepis exaltata,Boston swordfern,Forb/herb,High,Tolerant,28
        NYSY,Nyssa sylvatica,blackgum,Tree,Medium,Tolerant,-28
        OCBA,Ocimum basilicum,sweet basil,Forb/herb,Medium,Intolerant,33
        OPHU,Opuntia humifusa,devil's-tongue,Shrub,Low,Intolerant,-33
        PAQU2,Parthenocissus quinquefolia,Virginia creeper,Vine,Medium,Tolerant,-33
        PAVI2,Panicum virgatum,switchgrass,Graminoid,Medium,Intolerant,-38
        PEAM3,Persea americana,avocado,Tree,Medium,Intermediate,28
        PEDI,Penstemon digitalis,foxglove beardtongue,Forb/herb,Medium,Intermediate,-28
        PHPA9,Phlox paniculata,fall phlox,Forb/herb,Medium,Intermediate,-33
        PIGL,Picea glauca,white spruce,Tree,Medium,Tolerant,-70
        PIPU,Picea pungens,blue spruce,Tree,Medium,Intermediate,-43
        PIST,Pinus strobus,eastern white pine,Tree,Medium,Intermediate,-43
        PLAU,Plumbago auriculata,Cape leadwort,Shrub,Medium,Intolerant,23
        PLOC,Platanus occidentalis,American sycamore,Tree,High,Intermediate,-28
        POTR5,Populus tremuloides,quaking aspen,Tree,Medium,Intolerant,-75
        PRSE2,Prunus serotina,black cherry,Tree,Medium,Intermediate,-38
        QUAL,Quercus alba,white oak,Tree,Medium,Intermediate,-28
        QURU,Quercus rubra,northern red oak,Tree,Medium,Intermediate,-33
        RHMA4,Rhododendron maximum,great laurel,Shrub,Medium,Tolerant,-28
        RHTY,Rhus typhina,staghorn sumac,Shrub,Low,Intolerant,-43
        ROOF,Rosmarinus officinalis,rosemary,Subshrub,Low,Intolerant,13
        RUFU2,Rudbeckia fulgida,orange coneflower,Forb/herb,Medium,Intermediate,-33
        RUHI2,Rudbeckia hirta,blackeyed Susan,Forb/herb,Medium,Intermediate,-38
        SAAL5,Sassafras albidum,sassafras,Tree,Medium,Intolerant,-28
        SCSC,Schizachyrium scoparium,little bluestem,Graminoid,Low,Intolerant,-38
        SERE2,Serenoa repens,saw palmetto,Shrub,Medium,Tolerant,13
        SOCA6,Solidago canadensis,Canada goldenrod,Forb/herb,Medium,Intolerant,-43
        SOLY2,Solanum lycopersicum,garden tomato,Forb/herb,Medium,Intolerant,33
        SONU2,Sorghastrum nutans,Indiangrass,Graminoid,Medium,Intolerant,-38
        SYNO2,Symphyotrichum novae-angliae,New England aster,Forb/herb,Medium,Intermediate,-38
        TADI2,Taxodium distichum,bald cypress,Tree,High,Intolerant,-8
        THOC,Thuja occidentalis,arborvitae,Tree,High,Tolerant,-43
        TIAM,Tilia americana,American basswood,Tree,Medium,Tolerant,-38
        TSCA,Tsuga canadensis,eastern hemlock,Tree,Medium,Tolerant,-33
        VAAN,Vaccinium angustifolium,lowbush blueberry,Shrub,Medium,Intermediate,-43
        VACO,Vaccinium corymbosum,highbush blueberry,Shrub,High,Intermediate,-33
        VEHA2,Verbena hastata,swamp verbena,Forb/herb,High,Intolerant,-38
        VIDE,Viburnum dentatum,southern arrowwood,Shrub,Medium,Tolerant,-33
        VIMI2,Vinca minor,common periwinkle,Subshrub,Medium,Tolerant,-28
        YUFI,Yucca filamentosa,Adam's needle,Shrub,Low,Intolerant,-23
        ZIAU,Zizia aurea,golden zizia,Forb/herb,Medium,Intermediate,-38

        """#
}
