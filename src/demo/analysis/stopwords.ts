/**
 * Function words left out of keywords, in the two languages the demo speaks
 * (English and Portuguese). Short on purpose: enough to keep "the" and "que"
 * out of the keyword list, not a linguistic resource.
 */
const EN = `a about above after again against all also am an and any are as at be because been before being below between
both but by can could did do does doing down during each few for from further had has have having he her here hers herself
him himself his how i if in into is it its itself just me more most my myself no nor not now of off on once only or other
our ours ourselves out over own same she should so some such than that the their theirs them themselves then there these
they this those through to too under until up very was we were what when where which while who whom why will with would
you your yours yourself yourselves one two may might must shall us been upon per via etc every new old long short
many much little like well even still yet back way get got make made say said see seen know known first last next another
around across among within without though although however whether thus also either neither ever never always often less
least`;

const PT = `a ao aos aquela aquelas aquele aqueles aquilo as até com como da das de dela delas dele deles depois do dos e ela
elas ele eles em entre era eram essa essas esse esses esta estas este estes eu foi fomos for foram há isso isto já lhe lhes
mais mas me mesmo meu meus minha minhas muito na nas nem no nos nossa nossas nosso nossos num numa não o os ou para pela
pelas pelo pelos por qual quando que quem se sem ser seu seus sua suas só também te tem têm tu tua tuas um uma umas uns você
vocês vos à às é são está estão ser sido sobre pois porque cada onde assim então ainda seja sejam deve devem pode podem
foi será serão tal tais outro outra outros outras mesma mesmos mesmas todo toda todos todas novo nova novos novas longo
longa muitos muitas pouco pouca poucos poucas sempre nunca depois antes agora bem apenas cerca primeiro primeira último última`;

const words = (list: string) => new Set(list.split(/\s+/).filter(Boolean));

/** English function words. */
export const STOPWORDS_EN: ReadonlySet<string> = words(EN);
/** Portuguese function words. */
export const STOPWORDS_PT: ReadonlySet<string> = words(PT);

/** Both lists: a document in either language (or a mix) gets clean keywords. */
export const STOPWORDS: ReadonlySet<string> = new Set([...STOPWORDS_EN, ...STOPWORDS_PT]);
